// Token-level helpers of the Prometheus text parser: numbers with Go's ParseFloat/ParseInt
// semantics, UTF-8 checks and quoting of offending input for error messages. Private to wire/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuaas/wire/utf8.hpp"

namespace gpuaas::wire::prom_text {

// Offending tokens are quoted in messages up to this many bytes, so one huge token cannot turn an
// error list into a copy of the input.
inline constexpr std::size_t kMaxQuotedBytes = 40;

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

void append_escaped_byte(std::string& out, char c);
// "token", escaped and truncated to kMaxQuotedBytes ("..." marks the cut).
std::string quote(std::string_view s);
// A single character for messages: 'x', or the escaped byte for unprintable ones.
std::string describe_char(char c);
bool ascii_iequals(std::string_view a, std::string_view lower);

enum class NumberStatus { kOk, kSyntax, kOutOfRange };
// Go strconv.ParseFloat(s, 64), restricted to what Prometheus accepts (no hex, no '_').
NumberStatus parse_float(std::string_view s, double& out);
// Go strconv.ParseInt(s, 10, 64).
NumberStatus parse_int64(std::string_view s, int64_t& out);

}  // namespace gpuaas::wire::prom_text
