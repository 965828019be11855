// Helpers for the policy tests: load YAML from a string, and show diagnostics as the CLI prints
// them so that a failing expectation says what the loader said.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::policy::testing {

inline LoadResult load_text(const std::string& yaml, const std::string& file = "p.yaml") {
  return parse_policy_texts({{file, yaml}});
}

inline std::vector<std::string> lines(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.str());
  return out;
}

inline std::string joined(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += d.str() + "\n";
  return out;
}

inline std::string shared_dir() { return GPUAAS_SHARED_DIR; }
inline std::string kueue_manifest(const std::string& name) {
  return shared_dir() + "/manifests/kueue/" + name;
}

}  // namespace gpuaas::policy::testing
