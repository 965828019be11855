// UTF-8 checks, in one place: Prometheus label values, dead-letter payloads shown as text, and
// protobuf string fields (proto3 rejects a message whose strings are not UTF-8).
#pragma once

#include <string>
#include <string_view>

namespace gpuaas::wire {

// Offset of the first byte that is not part of valid UTF-8 (overlongs, surrogates and code points
// above U+10FFFF are invalid, as in Go's utf8.ValidString), or npos.
std::size_t find_invalid_utf8(std::string_view s);

inline bool valid_utf8(std::string_view s) {
  return find_invalid_utf8(s) == std::string_view::npos;
}

// At most `max` bytes of the text for a log line: control bytes and what is not UTF-8 become
// '?', and a longer text ends in "...".
std::string printable(std::string_view s, std::size_t max = 80);

// The text with each byte that does not start a valid sequence replaced by '?'.
std::string sanitize_utf8(std::string_view s);

}  // namespace gpuaas::wire
