// GPU use from dcgm-exporter's utilisation samples of a workload's pods, for activity().
#pragma once

#include <functional>
#include <string_view>

#include "gpuaas/plugin/samples.hpp"

namespace gpuaas::plugin {

// dcgm-exporter's utilisation of one GPU, in percent (one sample per GPU and scrape).
inline constexpr std::string_view kGpuUtilMetric = "DCGM_FI_DEV_GPU_UTIL";

// What a workload's kGpuUtilMetric samples say against a threshold.
struct GpuUtil {
  int samples = 0;  // how many were the workload's (NaN values left out)
  double max = 0;   // the highest utilisation among them (0 when none)
  // The latest sample above the threshold (it points into the Samples); nullptr when none was.
  const v1::MetricSample* busy = nullptr;
};

// Reads the kGpuUtilMetric samples of namespace `ns` whose pod (Samples::pod) `is_pod` accepts.
// A sample that names no pod or no namespace counts: the host passed it as the workload's and
// nothing in it says otherwise. `ns` "" accepts every namespace.
GpuUtil gpu_util(const Samples& samples, double threshold, std::string_view ns,
                 const std::function<bool(std::string_view pod)>& is_pod);

// The activity answer: ACTIVE at the busy sample's time (its value, pod and gpu as evidence);
// IDLE with the count and the max when none was above the threshold; UNKNOWN without samples.
// `whose` names the samples in the evidence: "the Job's pods".
v1::WorkloadActivity gpu_util_activity(const GpuUtil& util, double threshold,
                                       std::string_view whose);

}  // namespace gpuaas::plugin
