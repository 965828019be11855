// Event time: the only clock decisions read. It comes from event timestamps and ticks, never from
// the wall clock, so a replay of the same events gives the same decisions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpuaas::wire {

using EventTime = std::chrono::sys_time<std::chrono::nanoseconds>;

inline EventTime from_unix_ms(int64_t ms) { return EventTime(std::chrono::milliseconds(ms)); }
inline int64_t to_unix_ms(EventTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// RFC 3339 in UTC with milliseconds, e.g. "2026-11-29T16:03:23.000Z".
std::string format_rfc3339(EventTime t);

}  // namespace gpuaas::wire
