// Internals of the pod plugin (plain v1 Pods, as Kueue's pod integration treats them): one
// function per concept, called from plugin.cpp.
#pragma once

#include <string>

#include "gpuaas/plugin/sdk.hpp"

namespace gpuaas::pod {

using plugin::Json;
using plugin::Workload;

// The gate the bridge's webhook adds to a queued Pod; only admission removes it.
inline constexpr const char* kAdmissionGate = "kueue.x-k8s.io/admission";
// Kueue's pod groups: pods naming one group are one workload of that many pods.
inline constexpr const char* kGroupNameLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr const char* kGroupTotalAnnotation = "kueue.x-k8s.io/pod-group-total-count";
// JSON pointers (RFC 6901: "/" inside a key is written "~1").
inline constexpr const char* kGroupNamePointer = "/metadata/labels/kueue.x-k8s.io~1pod-group-name";
inline constexpr const char* kGroupTotalPointer =
    "/metadata/annotations/kueue.x-k8s.io~1pod-group-total-count";
inline constexpr const char* kPodSpec = "/spec";
inline constexpr const char* kGates = "/spec/schedulingGates";
// The pod set Kueue names a single pod's after (kueue.DefaultPodSetName).
inline constexpr const char* kPodSetName = "main";

// The plugin configuration (JSON object; unknown keys are refused).
struct Config {
  // DCGM_FI_DEV_GPU_UTIL above this (percent) counts as use.
  double gpu_util_threshold = 5.0;

  static Config parse(const Json& config);  // throws InvalidInput
};

// spec.schedulingGates as a list (empty when absent); InvalidInput naming the entry when an
// entry is not {"name": string}.
Json scheduling_gates(const Workload& w);
// Whether the Pod still carries kAdmissionGate, i.e. it was never released.
bool gated(const Workload& w);

v1::WorkloadDemand pod_demand(const Workload& w);
v1::WorkloadLifecycle pod_lifecycle(const Workload& w);
plugin::Patch pod_admit(const Workload& w, const v1::ActionRequest& request);
plugin::Patch pod_suspend(const Workload& w);
v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold);

}  // namespace gpuaas::pod
