#include "prometheus_text_tokens.hpp"

#include <charconv>
#include <cstring>
#include <limits>
#include <system_error>

namespace gpuaas::wire::prom_text {
namespace {
bool is_underflow(std::string_view s);
}  // namespace

void append_escaped_byte(std::string& out, char c) {
  const auto u = static_cast<unsigned char>(c);
  if (c == '"' || c == '\\') {
    out += '\\';
    out += c;
  } else if (u < 0x20 || u >= 0x7f) {
    // Control and non-ASCII bytes are shown as \xNN so messages stay printable and loggable.
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 0xf];
  } else {
    out += c;
  }
}

// "token", escaped and truncated to kMaxQuotedBytes ("..." marks the cut).
std::string quote(std::string_view s) {
  const bool truncated = s.size() > kMaxQuotedBytes;
  if (truncated) s = s.substr(0, kMaxQuotedBytes);
  std::string out;
  out.reserve(s.size() + 8);
  out += '"';
  for (char c : s) append_escaped_byte(out, c);
  if (truncated) out += "...";
  out += '"';
  return out;
}

// A single character for messages: 'x', or the escaped byte for unprintable ones.
std::string describe_char(char c) {
  std::string out = "'";
  if (c == '\'') {
    out += "\\'";
  } else {
    append_escaped_byte(out, c);
  }
  out += '\'';
  return out;
}

bool ascii_iequals(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

namespace {

// For a token that has the shape of a decimal float but which from_chars reported out of range:
// true if it is too small (Go's ParseFloat rounds that to zero without error) rather than too
// large (an error in Go too). `s` has no sign. Only the sign of the overall decimal exponent
// matters, since a range error needs |exponent| of roughly 308 or more.
bool is_underflow(std::string_view s) {
  int64_t magnitude = 0;  // decimal exponent of the leading significant digit
  bool seen_point = false;
  bool seen_nonzero = false;
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      seen_point = true;
      continue;
    }
    if (!is_digit(c)) break;
    if (!seen_nonzero) {
      if (c != '0') seen_nonzero = true;
      if (seen_point) --magnitude;
      continue;
    }
    if (!seen_point) ++magnitude;
  }
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::string_view e = s.substr(i + 1);
    const bool negative = !e.empty() && e[0] == '-';
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) e.remove_prefix(1);
    const std::errc ec = std::from_chars(e.data(), e.data() + e.size(), exponent).ec;
    // A huge exponent saturates; half the range keeps the addition below from overflowing.
    if (ec == std::errc::result_out_of_range) exponent = std::numeric_limits<int64_t>::max() / 2;
    if (negative) exponent = -exponent;
  }
  if (magnitude < -(std::numeric_limits<int64_t>::max() / 2)) return true;
  return magnitude + exponent < 0;
}

}  // namespace

// Go strconv.ParseFloat(s, 64) semantics, restricted to what Prometheus accepts (no hex, no '_').
NumberStatus parse_float(std::string_view s, double& out) {
  if (s.empty()) return NumberStatus::kSyntax;
  const bool has_sign = s[0] == '+' || s[0] == '-';
  const bool negative = s[0] == '-';
  const std::string_view unsigned_part = has_sign ? s.substr(1) : s;
  if (ascii_iequals(unsigned_part, "inf") || ascii_iequals(unsigned_part, "infinity")) {
    out = negative ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
    return NumberStatus::kOk;
  }
  if (!has_sign && ascii_iequals(unsigned_part, "nan")) {
    out = std::numeric_limits<double>::quiet_NaN();
    return NumberStatus::kOk;
  }
  // Checking the first byte here keeps from_chars' own extensions ("nan(...)", a second sign
  // after a stripped '+') from being accepted.
  if (unsigned_part.empty() || !(is_digit(unsigned_part[0]) || unsigned_part[0] == '.')) {
    return NumberStatus::kSyntax;
  }
  // from_chars does not take a leading '+', but does take '-'.
  const char* first = negative ? s.data() : unsigned_part.data();
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(first, last, out, std::chars_format::general);
  if (ec == std::errc::invalid_argument || ptr != last) return NumberStatus::kSyntax;
  if (ec == std::errc::result_out_of_range) {
    if (!is_underflow(unsigned_part)) return NumberStatus::kOutOfRange;
    out = negative ? -0.0 : 0.0;
  }
  return NumberStatus::kOk;
}

// Go strconv.ParseInt(s, 10, 64): optional sign, decimal digits only.
NumberStatus parse_int64(std::string_view s, int64_t& out) {
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (s.empty() || !is_digit(s[0])) return NumberStatus::kSyntax;
  }
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), last, out);
  if (ec == std::errc::invalid_argument || ptr != last) return NumberStatus::kSyntax;
  if (ec == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  return NumberStatus::kOk;
}

}  // namespace gpuaas::wire::prom_text
