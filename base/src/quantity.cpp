#include "gpuaas/base/quantity.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>

namespace gpuaas {
namespace {

struct Suffix {
  std::string_view text;
  int base;      // 2 or 10
  int exponent;  // 2^exponent or 10^exponent
};

constexpr std::array<Suffix, 16> kSuffixes{{
    {"Ki", 2, 10},
    {"Mi", 2, 20},
    {"Gi", 2, 30},
    {"Ti", 2, 40},
    {"Pi", 2, 50},
    {"Ei", 2, 60},
    {"n", 10, -9},
    {"u", 10, -6},
    {"m", 10, -3},
    {"k", 10, 3},
    {"M", 10, 6},
    {"G", 10, 9},
    {"T", 10, 12},
    {"P", 10, 15},
    {"E", 10, 18},
    {"", 10, 0},
}};

// Decimal digits of the number, most significant first: at most 64 input digits, and a binary
// suffix (at most 2^60 < 10^19) adds at most 19.
constexpr std::size_t kMaxDigits = 96;

// An exponent beyond this makes any non-zero value overflow or round up to 1m: saturating there
// keeps the arithmetic in range without changing the result.
constexpr int64_t kExponentCap = 1'000'000;

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
  // Number part: sign, digits, at most one '.'. Kept as decimal digits so that no magnitude of
  // mantissa or exponent can overflow the arithmetic: the value is
  //   digits * 10^(exponent10 - frac_digits) * 2^exponent2, in milli-units.
  std::array<char, kMaxDigits> digits{};
  std::size_t n = 0;
  int64_t frac_digits = 0;
  bool dot = false;
  std::size_t i = 0;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') negative = s[i++] == '-';
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digits[n++] = static_cast<char>(c - '0');
      if (dot) ++frac_digits;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (n == 0) return std::nullopt;
  std::string_view suffix = s.substr(i);
  int64_t exponent10 = 3;  // milli-units
  int exponent2 = 0;
  const Suffix* found = nullptr;
  for (const auto& sx : kSuffixes) {
    if (sx.text == suffix) found = &sx;
  }
  if (found != nullptr) {
    if (found->base == 2) {
      exponent2 = found->exponent;
    } else {
      exponent10 += found->exponent;
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {  // "Ei" and "E" are suffixes, looked up first
    std::string_view e = suffix.substr(1);
    bool e_negative = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      e_negative = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty()) return std::nullopt;
    int64_t x = 0;
    for (char c : e) {
      if (c < '0' || c > '9') return std::nullopt;
      x = std::min(x * 10 + (c - '0'), kExponentCap);
    }
    exponent10 += e_negative ? -x : x;
  } else {
    return std::nullopt;
  }
  // Multiply the digits by 2^exponent2 in place: each step's carry stays below the multiplier,
  // so digit * multiplier + carry < 10 * 2^60 fits in 64 bits.
  if (exponent2 > 0) {
    const uint64_t mult = uint64_t{1} << exponent2;
    uint64_t carry = 0;
    for (std::size_t k = n; k-- > 0;) {
      uint64_t t = static_cast<uint64_t>(digits[k]) * mult + carry;
      digits[k] = static_cast<char>(t % 10);
      carry = t / 10;
    }
    char spill[20];
    std::size_t m = 0;
    for (; carry > 0; carry /= 10) spill[m++] = static_cast<char>(carry % 10);
    std::copy_backward(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(n),
                       digits.begin() + static_cast<std::ptrdiff_t>(n + m));
    for (std::size_t k = 0; k < m; ++k) digits[k] = spill[m - 1 - k];
    n += m;
  }
  // The decimal point sits `shift` digits from the right end of the digits (left when negative):
  // the digits before it are the integer part, any non-zero digit after it rounds up.
  const int64_t shift = exponent10 - frac_digits;
  const int64_t int_digits =
      std::clamp<int64_t>(static_cast<int64_t>(n) + shift, 0, static_cast<int64_t>(n));
  std::size_t first = 0;  // first significant digit of the integer part
  while (first < static_cast<std::size_t>(int_digits) && digits[first] == 0) ++first;
  const int64_t significant = int_digits - static_cast<int64_t>(first);
  const int64_t trailing_zeros = std::max<int64_t>(shift, 0);
  uint64_t v = 0;
  if (significant > 0) {
    if (significant + trailing_zeros > 19) return std::nullopt;  // > 10^19 - 1 > int64 max
    for (std::size_t k = first; k < static_cast<std::size_t>(int_digits); ++k) {
      v = v * 10 + static_cast<uint64_t>(digits[k]);
    }
    for (int64_t k = 0; k < trailing_zeros; ++k) v *= 10;
  }
  for (std::size_t k = static_cast<std::size_t>(int_digits); k < n; ++k) {
    if (digits[k] != 0) {
      ++v;  // fractions below a milli-unit round up (away from zero), as Kubernetes does
      break;
    }
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  const auto signed_v = static_cast<int64_t>(v);
  return negative ? -signed_v : signed_v;
}

std::string format_milli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

}  // namespace gpuaas
