// Internals of the batch-job plugin (Kubernetes batch/v1 Job): one function per concept, called
// from plugin.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "gpuaas/plugin/sdk.hpp"

namespace gpuaas::batch_job {

using plugin::Json;
using plugin::Workload;

// The Job's one pod template, and the pod set Kueue names after it (kueue.DefaultPodSetName).
inline constexpr const char* kPodSpec = "/spec/template/spec";
inline constexpr const char* kPodSetName = "main";
inline constexpr const char* kSuspend = "/spec/suspend";
// Kueue's partial admission: the fewest pods the Job can run with.
inline constexpr const char* kMinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism";

// The plugin configuration (JSON object; unknown keys are refused).
struct Config {
  // DCGM_FI_DEV_GPU_UTIL above this (percent) counts as use.
  double gpu_util_threshold = 5.0;
  // Report kueue.x-k8s.io/job-min-parallelism as the pod set's min_count. Off by default: ADMIT
  // cannot lower spec.parallelism to the admitted count (the ActionRequest carries none), so a
  // partially admitted Job would start more pods than its quota covers.
  bool partial_admission = false;

  static Config parse(const Json& config);  // throws InvalidInput
};

v1::WorkloadDemand job_demand(const Workload& w, const Config& config);
v1::WorkloadLifecycle job_lifecycle(const Workload& w);
plugin::Patch job_admit(const Workload& w, const v1::ActionRequest& request);
plugin::Patch job_suspend(const Workload& w);
v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold);

}  // namespace gpuaas::batch_job
