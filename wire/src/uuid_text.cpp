#include "gpuaas/wire/uuid_text.hpp"

namespace gpuaas::wire {

std::string stable_uid(std::string_view kind, std::string_view ns, std::string_view name) {
  // Two FNV-1a 64-bit hashes with different offsets; formatted as a version-8 (custom) UUID.
  auto fnv = [&](uint64_t h) {
    for (std::string_view part : {kind, std::string_view("/"), ns, std::string_view("/"), name}) {
      for (unsigned char c : part) {
        h ^= c;
        h *= 0x100000001b3ULL;
      }
    }
    return h;
  };
  return uuid_text(fnv(0xcbf29ce484222325ULL), fnv(0x84222325cbf29ce4ULL), 8);
}

}  // namespace gpuaas::wire
