#include "gpuaas/base/whole_quantity.hpp"

#include <limits>
#include <utility>

namespace gpuaas {
namespace {

// Exact arithmetic past int64 (GCC and Clang both have it).
__extension__ typedef __int128 i128;

constexpr i128 kInt64Max = std::numeric_limits<int64_t>::max();
constexpr i128 kCap = static_cast<i128>(1) << 120;  // past any int64 times any multiplier here

// The digits of a quantity's number before its suffix, as mantissa and power of ten.
struct Number {
  bool negative = false;
  i128 mantissa = 0;
  int exp10 = 0;
  bool inexact = false;  // digits past what the mantissa holds were not all zero
};

bool parse_number(std::string_view& s, Number* n) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) n->negative = s[i++] == '-';
  bool digits = false, point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    digits = true;
    if (n->mantissa < kCap / 10) {
      n->mantissa = n->mantissa * 10 + (c - '0');
      if (point) --n->exp10;
    } else {
      if (!point) ++n->exp10;
      if (c != '0') n->inexact = true;
    }
  }
  if (!digits) return false;
  s.remove_prefix(i);
  return true;
}

}  // namespace

QuantityCheck whole_quantity(std::string_view text, int64_t* units) {
  std::string_view s = text;
  Number n;
  if (!parse_number(s, &n)) return QuantityCheck::kMalformed;
  int exp2 = 0;
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  static constexpr std::pair<std::string_view, int> kDecimal[] = {{"n", -9}, {"u", -6}, {"m", -3},
                                                                  {"k", 3},  {"M", 6},  {"G", 9},
                                                                  {"T", 12}, {"P", 15}, {"E", 18}};
  bool matched = s.empty();
  for (const auto& [suffix, e] : kBinary)
    if (!matched && s == suffix) exp2 = e, matched = true;
  for (const auto& [suffix, e] : kDecimal)
    if (!matched && s == suffix) n.exp10 += e, matched = true;
  if (!matched && (s[0] == 'e' || s[0] == 'E') && s.size() > 1) {
    // decimalExponent: e or E, then a signed whole number.
    std::string_view x = s.substr(1);
    bool neg = false;
    if (x[0] == '+' || x[0] == '-') neg = x[0] == '-', x.remove_prefix(1);
    int e = 0;
    bool ok = !x.empty();
    for (char c : x) {
      if (c < '0' || c > '9' || e > 10000)
        ok = false;
      else
        e = e * 10 + (c - '0');
    }
    if (ok) n.exp10 += neg ? -e : e, matched = true;
  }
  if (!matched) return QuantityCheck::kMalformed;
  if (n.mantissa == 0 && !n.inexact) {
    *units = 0;
    return QuantityCheck::kOk;
  }
  if (n.negative) return QuantityCheck::kNegative;
  if (n.inexact) return n.exp10 >= 0 ? QuantityCheck::kTooLarge : QuantityCheck::kFraction;
  i128 v = n.mantissa;
  for (int i = 0; i < exp2; ++i) {
    v *= 2;
    if (v > kCap) return QuantityCheck::kTooLarge;
  }
  for (int e = n.exp10; e > 0; --e) {
    v *= 10;
    if (v > kCap) return QuantityCheck::kTooLarge;
  }
  for (int e = n.exp10; e < 0; ++e) {
    if (v % 10 != 0) return QuantityCheck::kFraction;
    v /= 10;
  }
  if (v > kInt64Max) return QuantityCheck::kTooLarge;
  *units = static_cast<int64_t>(v);
  return QuantityCheck::kOk;
}

}  // namespace gpuaas
