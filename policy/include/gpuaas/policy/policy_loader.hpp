// Reads and validates a set of policy files together: unknown kinds and fields, wrong types,
// impossible values and dangling references are errors, each as FILE:LINE:COLUMN: message.
// Kueue fields gpuaas knows but does not act on are warnings, so Kueue setups load unchanged.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::policy {

struct Diagnostic {
  SourceRef at;
  std::string message;
  std::string str() const;  // "FILE:LINE:COLUMN: message"
};

struct LoadResult {
  PolicySet set;                     // meaningful only when errors is empty
  std::vector<Diagnostic> errors;    // in file order
  std::vector<Diagnostic> warnings;  // "FILE:LINE:COLUMN: warning: ..." when printed
  bool ok() const { return errors.empty(); }
};

// Files are read in the order given; a directory stands for its *.yaml and *.yml files, sorted.
LoadResult load_policy_files(const std::vector<std::string>& paths);
// The same from text in memory: (file name for messages, YAML text) pairs.
LoadResult parse_policy_texts(const std::vector<std::pair<std::string, std::string>>& texts);

}  // namespace gpuaas::policy
