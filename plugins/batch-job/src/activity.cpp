// Whether a Job uses its GPUs: dcgm-exporter's DCGM_FI_DEV_GPU_UTIL of the Job's pods. The Job
// controller names them from a generated name: "<job>-" plus 5 random characters, or for an
// Indexed Job "<job>-<index>-" plus 5, the prefix cut to 58 characters (the job name shortened
// first in the indexed form). Matching that shape, not just the prefix, keeps the pods of a Job
// "train-eval" away from a Job "train". A sample of another namespace is ignored; Prometheus
// renames the exporter's target labels to exported_pod / exported_namespace, so those win.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "batch_job.hpp"

namespace gpuaas::batch_job {
namespace {

constexpr std::string_view kGpuUtil = "DCGM_FI_DEV_GPU_UTIL";
constexpr std::size_t kMaxGeneratedName = 58;  // the API server's cut before the random part
constexpr std::size_t kRandom = 5;

std::string_view either(const v1::MetricSample& s, std::string_view preferred,
                        std::string_view fallback) {
  std::string_view v = plugin::Samples::label(s, preferred);
  return v.empty() ? plugin::Samples::label(s, fallback) : v;
}

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool job_pod(std::string_view pod, std::string_view job, bool indexed) {
  if (pod.size() <= kRandom) return false;
  const std::string_view base = pod.substr(0, pod.size() - kRandom);
  if (!indexed) {
    const std::string plain = std::string(job) + "-";
    return base == std::string_view(plain).substr(0, kMaxGeneratedName);
  }
  // "<job>-<index>-": the index is the last dash-delimited part before the final dash.
  if (base.size() < 3 || base.back() != '-') return false;
  const std::size_t dash = base.rfind('-', base.size() - 2);
  if (dash == std::string_view::npos || !digits(base.substr(dash + 1, base.size() - dash - 2))) {
    return false;
  }
  const std::size_t suffix = base.size() - dash;  // "-<index>-"
  if (suffix > kMaxGeneratedName) return false;
  return base.substr(0, dash) == job.substr(0, std::min(job.size(), kMaxGeneratedName - suffix));
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold) {
  const std::string name = w.name();
  const std::string ns = w.namespace_();
  const Json* mode = w.find("/spec/completionMode");
  const bool indexed = mode != nullptr && *mode == "Indexed";
  int relevant = 0;
  double max = 0;
  const v1::MetricSample* busiest = nullptr;  // the latest sample above the threshold
  for (const auto& s : samples) {
    if (s.name() != kGpuUtil || std::isnan(s.value())) continue;
    const std::string_view pod = either(s, "exported_pod", "pod");
    const std::string_view sample_ns = either(s, "exported_namespace", "namespace");
    if (!pod.empty() && !job_pod(pod, name, indexed)) continue;
    if (!sample_ns.empty() && !ns.empty() && sample_ns != ns) continue;
    ++relevant;
    max = relevant == 1 ? s.value() : std::max(max, s.value());
    if (s.value() > threshold &&
        (busiest == nullptr || s.timestamp_ms() > busiest->timestamp_ms())) {
      busiest = &s;
    }
  }
  if (relevant == 0) {
    return plugin::unknown_activity("no " + std::string(kGpuUtil) + " sample of the Job's pods");
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
                      " samples of the Job's pods, none above " + number(threshold) + " (max " +
                      number(max) + ")");
}

}  // namespace gpuaas::batch_job
