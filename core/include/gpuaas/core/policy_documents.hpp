// Policy files as YAML documents: read and checked for syntax and identity (apiVersion, kind,
// metadata.name), with FILE:LINE:COLUMN errors. What each kind means is the admission layer's
// business (issue #4); until then the daemon loads and lists them.
#pragma once

#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::core {

struct PolicyDocument {
  std::string file;
  int line = 0;  // 1-based line of the document
  std::string api_version;
  std::string kind;
  std::string name;
  std::string namespace_;
};

Result<std::vector<PolicyDocument>> read_policy_documents(const std::vector<std::string>& files);

}  // namespace gpuaas::core
