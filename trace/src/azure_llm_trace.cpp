#include "gpuaas/trace/azure_llm_trace.hpp"

#include <chrono>
#include <limits>
#include <optional>
#include <string_view>

#include "gpuaas/trace/trace_csv.hpp"

namespace gpuaas::trace {
namespace {

constexpr std::string_view kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

// Reads `n` decimal digits at `pos`; false if any is not a digit.
bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// Microseconds since 1970-01-01 of `YYYY-MM-DD HH:MM:SS[.fraction]`, or nullopt. Microseconds
// rather than nanoseconds so that any four-digit year fits in 64 bits; the trace needs ms.
std::optional<int64_t> parse_timestamp(std::string_view s) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
      !digits(s, 14, 2, mi) || !digits(s, 17, 2, sec)) {
    return std::nullopt;
  }
  const std::chrono::year_month_day ymd{std::chrono::year{y},
                                        std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  int64_t micros = 0;
  if (s.size() > 19) {
    const std::string_view frac = s.substr(20);
    if (s[19] != '.' || frac.empty() || frac.size() > 9) return std::nullopt;
    for (std::size_t i = 0; i < 6; ++i) {  // digits past the sixth are checked, then dropped
      int digit = 0;
      if (i < frac.size() && !digits(frac, i, 1, digit)) return std::nullopt;
      micros = micros * 10 + digit;
    }
    for (std::size_t i = 6; i < frac.size(); ++i) {
      int digit = 0;
      if (!digits(frac, i, 1, digit)) return std::nullopt;
    }
  }
  const int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  return ((days * 24 + h) * 60 + mi) * 60 * int64_t{1'000'000} + sec * int64_t{1'000'000} + micros;
}

}  // namespace

Result<std::vector<AzureRequest>> read_azure_llm(const std::string& path) {
  constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();
  int64_t first_us = 0, previous_us = 0;
  std::string previous;  // the row before's TIMESTAMP cell, empty before the first row
  bool first = true;
  return read_csv<AzureRequest>(path, kHeader, [&](CsvCells& c) {
    AzureRequest r;
    const std::optional<int64_t> us = parse_timestamp(c.view(0));
    if (!us) {
      c.fail(0, "\"" + c.text(0) + "\" is not a timestamp like \"2023-11-16 18:15:46.6805900\"");
      return r;
    }
    if (first) {
      first_us = *us;
    } else if (*us < previous_us) {
      c.fail(0, "\"" + c.text(0) + "\" is earlier than the row before it (\"" + previous + "\")");
      return r;
    }
    first = false;
    previous_us = *us;
    previous = c.text(0);
    r.offset_ms = (*us - first_us) / 1000;
    r.context_tokens = static_cast<int32_t>(c.count(1, kMaxTokens));
    r.generated_tokens = static_cast<int32_t>(c.count(2, kMaxTokens));
    return r;
  });
}

}  // namespace gpuaas::trace
