// UUID text form (8-4-4-4-12 hex) with the version and RFC 4122 variant bits set; shared by the
// random ids of events and the stable uids of hand-written objects.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpuaas::wire {

inline std::string uuid_text(uint64_t hi, uint64_t lo, unsigned version) {
  hi = (hi & ~0xF000ULL) | (static_cast<uint64_t>(version & 0xF) << 12);
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

// The uid of an object written by hand (no uid of its own): the same for the same kind, namespace
// and name, wherever it is made (gpuaasctl, the daemon, the bench).
std::string stable_uid(std::string_view kind, std::string_view ns, std::string_view name);

}  // namespace gpuaas::wire
