#include "gpuaas/core/quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace gpuaas::core {
namespace {

// Exact intermediate arithmetic for mantissa * 2^60 * 1000 without overflow.
__extension__ typedef __int128 Int128;

struct Suffix {
  std::string_view text;
  int base;      // 2 or 10
  int exponent;  // 2^exponent or 10^exponent
};

constexpr std::array<Suffix, 16> kSuffixes{{
    {"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},
    {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"", 10, 0},
}};

}  // namespace

std::optional<int64_t> parse_quantity_milli(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  // Fast path for what nodes and pods mostly carry: a small plain integer, optionally "m".
  if (s.size() <= 12) {
    int64_t v = 0;
    std::size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
    if (i > 0 && i == s.size()) return v * 1000;
    if (i > 0 && i + 1 == s.size() && s[i] == 'm') return v;
  }
  // Number part: sign, digits, optional fraction.
  std::size_t i = 0;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') negative = s[i++] == '-';
  std::size_t num_start = i;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  std::string_view number = s.substr(num_start, i - num_start);
  if (number.empty() || number == "." || number.find('.') != number.rfind('.')) {
    return std::nullopt;
  }
  std::string_view suffix = s.substr(i);
  int base = 10;
  int exponent = 0;
  if (!suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    int e = 0;
    auto [p, ec] = std::from_chars(suffix.data() + 1 + (suffix[1] == '+'),
                                   suffix.data() + suffix.size(), e);
    if (ec != std::errc() || p != suffix.data() + suffix.size()) return std::nullopt;
    exponent = e;
  } else {
    bool found = false;
    for (const auto& sx : kSuffixes) {
      if (sx.text == suffix) {
        base = sx.base;
        exponent = sx.exponent;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  // Integer and fraction digits as an exact decimal: mantissa * 10^-frac_digits.
  Int128 mantissa = 0;
  int frac_digits = 0;
  bool in_fraction = false;
  for (char c : number) {
    if (c == '.') {
      in_fraction = true;
      continue;
    }
    if (mantissa > (static_cast<Int128>(1) << 100)) return std::nullopt;
    mantissa = mantissa * 10 + (c - '0');
    if (in_fraction) ++frac_digits;
  }
  // value_milli = mantissa * base^exponent * 1000 / 10^frac_digits, rounded up.
  Int128 num = mantissa * 1000;
  Int128 den = 1;
  for (int k = 0; k < frac_digits; ++k) den *= 10;
  const Int128 kLimit = static_cast<Int128>(std::numeric_limits<int64_t>::max());
  if (exponent >= 0) {
    for (int k = 0; k < exponent; ++k) {
      num *= base;
      if (num / den > kLimit) return std::nullopt;
    }
  } else {
    for (int k = 0; k < -exponent; ++k) den *= base;
  }
  Int128 v = (num + den - 1) / den;
  if (v > kLimit) return std::nullopt;
  return static_cast<int64_t>(negative ? -v : v);
}

std::string format_milli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

}  // namespace gpuaas::core
