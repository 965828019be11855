// Go-style durations ("1h30m", "90s", "1.5h"), the syntax Kubernetes users already write; kept
// here rather than shared with gpuaas_core so the policy library stands alone.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::policy {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// Nanoseconds per unit; 0 when `unit` is not one of Go's.
int64_t unit_nanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") return 1'000;
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return kNanosPerSecond;
  if (unit == "m") return 60 * kNanosPerSecond;
  if (unit == "h") return 3600 * kNanosPerSecond;
  return 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<std::chrono::seconds> parse_duration(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s == "0") return std::chrono::seconds{0};
  if (s.empty()) return std::nullopt;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;  // nanoseconds
  size_t i = 0;
  while (i < s.size()) {
    // A number: digits, optionally a fraction; at least one digit on either side of the point.
    int64_t whole = 0;
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) {
      if (whole > (kMax - 9) / 10) return std::nullopt;
      whole = whole * 10 + (s[i++] - '0');
    }
    bool had_whole = i > start;
    long double fraction = 0;
    bool had_fraction = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      long double scale = 0.1L;
      while (i < s.size() && is_digit(s[i])) {
        fraction += scale * (s[i++] - '0');
        scale /= 10;
        had_fraction = true;
      }
    }
    if (!had_whole && !had_fraction) return std::nullopt;
    // The unit: everything up to the next digit or point.
    size_t unit_start = i;
    while (i < s.size() && !is_digit(s[i]) && s[i] != '.') ++i;
    int64_t unit = unit_nanos(s.substr(unit_start, i - unit_start));
    if (unit == 0) return std::nullopt;
    if (whole > kMax / unit) return std::nullopt;
    int64_t part = whole * unit + static_cast<int64_t>(std::llroundl(fraction * unit));
    if (part < 0 || total > kMax - part) return std::nullopt;
    total += part;
  }
  // Policies speak in seconds; a stray "1500ms" is more likely a mistake than a wish.
  if (total % kNanosPerSecond != 0) return std::nullopt;
  return std::chrono::seconds{total / kNanosPerSecond};
}

std::string format_duration(std::chrono::seconds d) {
  int64_t s = d.count();
  if (s == 0) return "0s";
  std::string out;
  if (s < 0) {
    out = "-";
    s = -s;
  }
  if (s >= 3600) out += std::to_string(s / 3600) + "h";
  if (s % 3600 >= 60) out += std::to_string(s % 3600 / 60) + "m";
  if (s % 60 != 0) out += std::to_string(s % 60) + "s";
  return out;
}

std::optional<double> parse_latency(std::string_view v) {
  double scale = 1.0;
  if (v.ends_with("ms")) {
    scale = 0.001;
    v.remove_suffix(2);
  } else if (v.ends_with("s")) {
    v.remove_suffix(1);
  }
  double x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !(x > 0) || !std::isfinite(x))
    return std::nullopt;
  return x * scale;
}

}  // namespace gpuaas::policy
