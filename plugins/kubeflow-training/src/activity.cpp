// Whether a training job uses its GPUs: dcgm-exporter's DCGM_FI_DEV_GPU_UTIL of the job's pods.
// Every operator names the pods "<job name>-..." (PyTorchJob "<job>-worker-0", MPIJob
// "<job>-launcher-x", a TrainJob's JobSet "<job>-node-0-0-x"); a sample of another pod or
// namespace is ignored even if the host passed it (plugin::gpu_util reads the labels).
#include <string>
#include <string_view>

#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {

v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold) {
  const std::string prefix = w.name() + "-";
  const plugin::GpuUtil util = plugin::gpu_util(
      samples, threshold, w.namespace_(),
      [&](std::string_view pod) { return pod.substr(0, prefix.size()) == prefix; });
  return plugin::gpu_util_activity(util, threshold, "the job's pods");
}

}  // namespace gpuaas::kubeflow_training
