#include "gpuaas/plugin/gpu_util.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuaas::plugin {

GpuUtil gpu_util(const Samples& samples, double threshold, std::string_view ns,
                 const std::function<bool(std::string_view pod)>& is_pod) {
  GpuUtil u;
  for (const auto& s : samples) {
    if (s.name() != kGpuUtilMetric || std::isnan(s.value())) continue;
    const std::string_view pod = Samples::pod(s);
    const std::string_view sample_ns = Samples::namespace_(s);
    if (!pod.empty() && !is_pod(pod)) continue;
    if (!sample_ns.empty() && !ns.empty() && sample_ns != ns) continue;
    ++u.samples;
    u.max = u.samples == 1 ? s.value() : std::max(u.max, s.value());
    if (s.value() > threshold && (u.busy == nullptr || s.timestamp_ms() > u.busy->timestamp_ms())) {
      u.busy = &s;
    }
  }
  return u;
}

v1::WorkloadActivity gpu_util_activity(const GpuUtil& util, double threshold,
                                       std::string_view whose) {
  const std::string metric(kGpuUtilMetric);
  if (util.samples == 0)
    return unknown_activity("no " + metric + " sample of " + std::string(whose));
  if (util.busy != nullptr) {
    const std::string pod(Samples::pod(*util.busy));
    const std::string gpu(Samples::label(*util.busy, "gpu"));
    return active(metric + " " + format_number(util.busy->value()) + " > " +
                      format_number(threshold) + (pod.empty() ? "" : " on pod " + pod) +
                      (gpu.empty() ? "" : " gpu " + gpu),
                  util.busy->timestamp_ms());
  }
  return idle(std::to_string(util.samples) + " " + metric + " samples of " + std::string(whose) +
              ", none above " + format_number(threshold) + " (max " + format_number(util.max) +
              ")");
}

}  // namespace gpuaas::plugin
