// Whether a Job uses its GPUs: dcgm-exporter's DCGM_FI_DEV_GPU_UTIL of the Job's pods. The Job
// controller names them from a generated name: "<job>-" plus 5 random characters, or for an
// Indexed Job "<job>-<index>-" plus 5, the prefix cut to 58 characters (the job name shortened
// first in the indexed form). Matching that shape, not just the prefix, keeps the pods of a Job
// "train-eval" away from a Job "train". A sample of another namespace is ignored (plugin::gpu_util
// reads the labels).
#include <algorithm>
#include <string>
#include <string_view>

#include "batch_job.hpp"

namespace gpuaas::batch_job {
namespace {

constexpr std::size_t kMaxGeneratedName = 58;  // the API server's cut before the random part
constexpr std::size_t kRandom = 5;

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

}  // namespace

v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold) {
  const std::string name = w.name();
  const Json* mode = w.find("/spec/completionMode");
  const bool indexed = mode != nullptr && *mode == "Indexed";
  const plugin::GpuUtil util =
      plugin::gpu_util(samples, threshold, w.namespace_(),
                       [&](std::string_view pod) { return job_pod(pod, name, indexed); });
  return plugin::gpu_util_activity(util, threshold, "the Job's pods");
}

}  // namespace gpuaas::batch_job
