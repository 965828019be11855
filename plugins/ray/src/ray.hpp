// Internals of the ray plugin, shared by its source files: one function per concept, each taking
// the workload as the SDK hands it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuaas/plugin/sdk.hpp"

namespace gpuaas::ray {

using plugin::Json;
using plugin::Workload;

inline constexpr const char* kRayCluster = "RayCluster";
inline constexpr const char* kRayJob = "RayJob";

// Where a workload keeps its RayClusterSpec: "/spec" for a RayCluster, "/spec/rayClusterSpec" for
// a RayJob that creates its own cluster.
enum class Kind { kCluster, kJob };
Kind kind_of(const Workload& w);  // InvalidInput for any other kind

// Replica fields are Kubernetes int32: a count at `pointer`, `fallback` when absent; InvalidInput
// naming the pointer when negative, not an integer, or above 2^31-1.
int64_t int32_at(const Workload& w, const std::string& pointer, int64_t fallback);

// One worker group as KubeRay reads it (defaults applied).
struct WorkerGroup {
  std::string pointer;  // "/spec/workerGroupSpecs/0"
  std::string name;     // groupName
  int64_t replicas;     // desired replicas before clamping (absent: minReplicas)
  int64_t min_replicas;
  int64_t max_replicas;
  int64_t hosts;             // numOfHosts (pods per replica)
  bool suspended;            // the group's own suspend flag
  int64_t pods() const;      // clamp(replicas, min, max) * hosts, 0 when suspended
  int64_t min_pods() const;  // min(min, max) * hosts, 0 when suspended
};

// The worker groups of the RayClusterSpec at `base`; InvalidInput when malformed.
std::vector<WorkerGroup> worker_groups(const Workload& w, const std::string& base);
// Head and worker pod sets of the RayClusterSpec at `base`, appended to `demand`.
void cluster_demand(const Workload& w, const std::string& base, v1::WorkloadDemand& demand);
// PodSpec pointers of the RayClusterSpec at `base`: head first, then each worker group.
std::vector<std::string> cluster_pod_specs(const Workload& w, const std::string& base);
// True when spec.enableInTreeAutoscaling of the RayClusterSpec at `base` is true.
bool autoscaled(const Workload& w, const std::string& base);

// RayJob: the RayClusterSpec pointer, or "" when spec.clusterSelector picks an existing cluster.
std::string job_cluster_base(const Workload& w);
// RayJob: whether KubeRay runs a submitter pod (submissionMode K8sJobMode, the default).
bool job_has_submitter_pod(const Workload& w);
v1::WorkloadDemand job_demand(const Workload& w);

v1::WorkloadLifecycle cluster_lifecycle(const Workload& w);
v1::WorkloadLifecycle job_lifecycle(const Workload& w);

// Thresholds and switches of activity(), from the plugin configuration.
struct Config {
  double gpu_util_threshold = 5.0;          // percent; DCGM_FI_PROF_GR_ENGINE_ACTIVE uses /100
  bool ray_metrics = true;                  // read Ray's own metrics (tasks, Serve requests)
  std::vector<std::string> ignored_tasks;   // ray_tasks Name values that never count as use
  static Config parse(const Json& config);  // InvalidInput for unknown keys or wrong types
};

v1::WorkloadActivity activity(const Workload& w, const plugin::Samples& samples,
                              const Config& config);

plugin::Patch admit(const Workload& w, const v1::ActionRequest& r);
plugin::Patch suspend(const Workload& w);
plugin::Patch scale_to_zero(const Workload& w);
plugin::Patch scale_back(const Workload& w);

}  // namespace gpuaas::ray
