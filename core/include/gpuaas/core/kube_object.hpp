// Kubernetes objects as the model holds them: the identity and metadata every kind shares, the
// parts of Nodes and Pods the scheduler side needs, and the object's own JSON for plugins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/core/flat_map.hpp"

namespace gpuaas::core {

using Labels = FlatMap<std::string>;
using ResourceList = FlatMap<int64_t>;  // resource name -> milli-units

struct OwnerRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
};

struct ObjectMeta {
  std::string api_version;
  std::string kind;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resource_version;
  Labels labels;
  Labels annotations;
  std::optional<OwnerRef> controller;  // the ownerReference with controller: true
  bool deleting = false;               // metadata.deletionTimestamp is set
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  bool ready = false;
  bool unschedulable = false;
  std::vector<Taint> taints;
};

struct PodStatus {
  std::string node_name;
  std::string phase;      // Pending, Running, Succeeded, Failed, Unknown
  ResourceList requests;  // effective pod request: max(sum(containers), max(initContainers))
  bool gated = false;     // has scheduling gates
};

// A decoded object: metadata, kind-specific parts for Node and Pod, and the JSON it came from.
struct KubeObject {
  ObjectMeta meta;
  std::optional<NodeStatus> node;
  std::optional<PodStatus> pod;
  std::string json;
  // A group of workload objects admitted as one (workload_groups.cpp): the members' keys. The
  // group itself has no JSON; what is done to it is done to each member.
  std::vector<std::string> members;
};

// The resource every GPU decision counts.
inline constexpr const char* kGpuResource = "nvidia.com/gpu";
// GPU Feature Discovery's product label, e.g. "NVIDIA-H100-80GB-HBM3".
inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";

}  // namespace gpuaas::core
