// Whether a training job uses its GPUs: dcgm-exporter's DCGM_FI_DEV_GPU_UTIL of the job's pods.
// Every operator names the pods "<job name>-..." (PyTorchJob "<job>-worker-0", MPIJob
// "<job>-launcher-x", a TrainJob's JobSet "<job>-node-0-0-x"); a sample of another pod or
// namespace is ignored even if the host passed it. Prometheus renames the exporter's target
// labels to exported_pod / exported_namespace, so those win when present.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {
namespace {

constexpr std::string_view kGpuUtil = "DCGM_FI_DEV_GPU_UTIL";

std::string_view either(const v1::MetricSample& s, std::string_view preferred,
                        std::string_view fallback) {
  std::string_view v = plugin::Samples::label(s, preferred);
  return v.empty() ? plugin::Samples::label(s, fallback) : v;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold) {
  const std::string prefix = w.name() + "-";
  const std::string ns = w.namespace_();
  int relevant = 0;
  double max = 0;
  const v1::MetricSample* busiest = nullptr;  // the latest sample above the threshold
  for (const auto& s : samples) {
    if (s.name() != kGpuUtil || std::isnan(s.value())) continue;
    const std::string_view pod = either(s, "exported_pod", "pod");
    const std::string_view sample_ns = either(s, "exported_namespace", "namespace");
    if (!pod.empty() && pod.substr(0, prefix.size()) != prefix) continue;
    if (!sample_ns.empty() && !ns.empty() && sample_ns != ns) continue;
    ++relevant;
    max = relevant == 1 ? s.value() : std::max(max, s.value());
    if (s.value() > threshold &&
        (busiest == nullptr || s.timestamp_ms() > busiest->timestamp_ms())) {
      busiest = &s;
    }
  }
  if (relevant == 0) {
    return plugin::unknown_activity("no " + std::string(kGpuUtil) + " sample of the job's pods");
  }
  if (busiest != nullptr) {
    std::string pod(either(*busiest, "exported_pod", "pod"));
    std::string gpu(plugin::Samples::label(*busiest, "gpu"));
    return plugin::active(std::string(kGpuUtil) + " " + number(busiest->value()) + " > " +
                              number(threshold) + (pod.empty() ? "" : " on pod " + pod) +
                              (gpu.empty() ? "" : " gpu " + gpu),
                          busiest->timestamp_ms());
  }
  return plugin::idle(std::to_string(relevant) + " " + std::string(kGpuUtil) +
                      " samples of the job's pods, none above " + number(threshold) + " (max " +
                      number(max) + ")");
}

}  // namespace gpuaas::kubeflow_training
