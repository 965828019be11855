// Whether a Pod uses its GPUs: dcgm-exporter's DCGM_FI_DEV_GPU_UTIL samples that name this very
// Pod in its namespace (plugin::gpu_util reads the labels).
#include <string>
#include <string_view>

#include "pod.hpp"

namespace gpuaas::pod {

v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold) {
  const std::string name = w.name();
  const plugin::GpuUtil util = plugin::gpu_util(samples, threshold, w.namespace_(),
                                                [&](std::string_view pod) { return pod == name; });
  return plugin::gpu_util_activity(util, threshold, "the Pod");
}

}  // namespace gpuaas::pod
