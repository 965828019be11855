// The model's key of a pod named by namespace and name, as metric labels and the touched-pod
// list name it. Private to gpuaas_core.
#pragma once

#include <string>
#include <string_view>

#include "gpuaas/core/cluster_model.hpp"

namespace gpuaas::core {

inline std::string pod_key(std::string_view ns, std::string_view name) {
  ObjectMeta m;
  m.api_version = "v1";
  m.kind = "Pod";
  m.namespace_ = std::string(ns);
  m.name = std::string(name);
  return ClusterModel::key_of(m);
}

}  // namespace gpuaas::core
