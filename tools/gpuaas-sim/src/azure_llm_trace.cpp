#include "azure_llm_trace.hpp"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

namespace gpuaas::sim {
namespace {

constexpr std::string_view kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr std::string_view kColumns[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
constexpr std::size_t kCells = 3;

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

// A token count: an integer in 0..INT32_MAX, or an error message.
std::optional<std::string> parse_tokens(std::string_view s, int32_t& out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::string quoted = "\"" + std::string(s) + "\"";
  if (ec == std::errc::result_out_of_range) return quoted + " is out of range";
  if (ec != std::errc() || end != s.data() + s.size()) return quoted + " is not an integer";
  if (v < 0) return quoted + " is negative";
  if (v > std::numeric_limits<int32_t>::max()) return quoted + " is out of range";
  out = static_cast<int32_t>(v);
  return std::nullopt;
}

}  // namespace

Result<std::vector<AzureRequest>> read_azure_llm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found(path + ": cannot open: " + std::strerror(errno));
  std::string line;
  int64_t line_no = 0;
  auto next = [&](std::string_view& out) {  // one line, without its CR
    if (!std::getline(in, line)) return false;
    ++line_no;
    out = line;
    if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
    return true;
  };
  auto where = [&] { return path + ":" + std::to_string(line_no); };

  std::string_view text;
  if (!next(text)) {
    return Status::invalid(path + ": empty file, expected the header \"" + std::string(kHeader) +
                           "\"");
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (text != kHeader) {
    return Status::invalid(where() + ": expected the header \"" + std::string(kHeader) +
                           "\", found \"" + std::string(text) + "\"");
  }

  std::vector<AzureRequest> out;
  int64_t first_us = 0, previous_us = 0;
  std::string previous;
  while (next(text)) {
    std::string_view cells[kCells];
    std::size_t n = 0, from = 0;
    for (;;) {  // no quoting: the trace has only numbers and timestamps
      const std::size_t comma = text.find(',', from);
      if (n < kCells) cells[n] = text.substr(from, comma - from);
      ++n;
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
    if (n != kCells) {
      return Status::invalid(where() + ": expected " + std::to_string(kCells) + " cells, found " +
                             std::to_string(n) + (text.empty() ? " (empty line)" : ""));
    }
    auto column = [&](std::size_t i, const std::string& what) {
      return Status::invalid(where() + ": column '" + std::string(kColumns[i]) + "': " + what);
    };
    const std::optional<int64_t> us = parse_timestamp(cells[0]);
    if (!us) {
      return column(0, "\"" + std::string(cells[0]) +
                           "\" is not a timestamp like \"2023-11-16 18:15:46.6805900\"");
    }
    if (out.empty()) first_us = *us;
    if (!out.empty() && *us < previous_us) {
      return column(0, "\"" + std::string(cells[0]) + "\" is earlier than the row before it (\"" +
                           previous + "\")");
    }
    previous_us = *us;
    previous = cells[0];
    AzureRequest r;
    r.offset_ms = (*us - first_us) / 1000;
    for (std::size_t i = 1; i < kCells; ++i) {
      if (auto err = parse_tokens(cells[i], i == 1 ? r.context_tokens : r.generated_tokens)) {
        return column(i, *err);
      }
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuaas::sim
