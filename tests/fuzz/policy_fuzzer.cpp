// The policy loader on arbitrary YAML text: parse, check kinds and fields, validate the set.
// Deeply nested documents must come back as an error (yaml-cpp's depth guard), never as a stack
// overflow. Besides crashes it checks that every error has a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/policy/policy_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  std::vector<std::pair<std::string, std::string>> texts;
  texts.emplace_back("fuzz.yaml", std::string(reinterpret_cast<const char*>(bytes), size));
  const auto result = gpuaas::policy::parse_policy_texts(texts);
  for (const auto& d : result.errors) {
    if (d.message.empty()) std::abort();
    (void)d.str();
  }
  for (const auto& d : result.warnings) (void)d.str();
  return 0;
}
