// Demand from pod templates, computed the way Kubernetes computes a pod's effective request.
#pragma once

#include <string>

#include "gpuaas/plugin/workload.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin {

// Per-pod resources of a PodSpec (the `spec` of a pod template, or an inline one such as a
// KServe predictor):
// each container requests what `requests` says, a resource with only a limit requests its limit
// (the API server's defaulting); the pod needs max(sum of containers and sidecars, the largest
// init container plus the sidecars started before it), plus spec.overhead. Any resource name is
// kept (nvidia.com/gpu, MIG profiles such as nvidia.com/mig-1g.10gb, fractions like "0.5").
// `where` is the spec's JSON pointer, used in messages; when it names the spec of a pod template
// (".../template/spec"), the template's pointer is kept as the set's template_pointer. Throws
// InvalidInput.
v1::PodSet pod_set(const std::string& name, int64_t count, const Json& pod_spec,
                   const std::string& where);

// A demand with the workload's queue and priority class filled in from Kueue's labels.
v1::WorkloadDemand demand_of(const Workload& w);

// The per-pod amount of a resource in milli-units (0 when the pod set does not ask for it).
int64_t per_pod_milli(const v1::PodSet& set, const std::string& resource);

}  // namespace gpuaas::plugin
