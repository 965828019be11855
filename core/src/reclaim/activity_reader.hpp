// Whether a workload is in use, from the samples the model holds: GPU activity of its own pods
// against the policy's thresholds (the core reads DCGM itself, so the policy's numbers decide,
// not a plugin's), plus what its plugin reads from the rest (request counters, kernels, Ray
// tasks). Private to gpuaas_core.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core {

struct ActivityVerdict {
  enum class Level { kUnknown, kActive, kIdle };
  Level level = Level::kUnknown;
  std::optional<wire::EventTime> last_active;  // latest time something showed use
  std::string evidence;                        // for a person: which samples decided
  std::optional<wire::EventTime> asked_at;  // latest use its plugin saw: requests, tasks, kernels
};

// Attribution: a sample labelled with a pod (pod / exported_pod) belongs to the workload whose
// controller chain owns that pod; a sample without a pod label belongs to it when it is in the
// workload's namespace and one of its label values begins with the workload's name (KServe's
// service_name "<isvc>-predictor", Ray's ray_io_cluster, a notebook label). Samples older than
// `fresh_since` say nothing. Without a `plugin` to ask only the GPU thresholds are read.
// `pods`: the workload's pods (ClusterModel::pods_of, or an index of them built once per pass).
ActivityVerdict read_activity(const ClusterModel& model, const KubeObject& workload,
                              const std::vector<const KubeObject*>& pods,
                              const policy::IdleReclaimPolicy& rule, wire::EventTime fresh_since,
                              WorkloadInterpreter* plugin);

}  // namespace gpuaas::core
