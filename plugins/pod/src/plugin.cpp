// The pod plugin: plain Pods as workloads, the way Kueue's pod integration treats them. No scale
// to zero: a Pod has no replica count, and once its gate is gone it can only run or be deleted.
#include "pod.hpp"

namespace gpuaas::pod {

class Pod {
 public:
  static constexpr plugin::Info info{"pod", "0.1.0", plugin::Stability::kAlpha};
  // Held by the admission gate the bridge's webhook adds; a Pod without the queue label is a
  // plain Pod the core only counts on its node. Binding required; a Pod has no template for the
  // webhook to gate: its admission gate holds it.
  static constexpr plugin::Kind kinds[] = {{.group = "",
                                            .version = "v1",
                                            .kind = "Pod",
                                            .plural = "pods",
                                            .hold = plugin::Hold::scheduling_gate(kAdmissionGate),
                                            .queued_only = true,
                                            .binding = plugin::Binding::kRequired}};

  explicit Pod(const Json& config) : config_(Config::parse(config)) {}

  v1::WorkloadDemand demand(const Workload& w) { return pod_demand(w); }

  v1::WorkloadLifecycle lifecycle(const Workload& w) { return pod_lifecycle(w); }

  plugin::Patch admit(const Workload& w, const v1::ActionRequest& r) { return pod_admit(w, r); }

  plugin::Patch suspend(const Workload& w, const v1::ActionRequest&) { return pod_suspend(w); }

  v1::WorkloadActivity activity(const Workload& w, const plugin::Samples& samples) {
    return gpu_activity(w, samples, config_.gpu_util_threshold);
  }

 private:
  Config config_;
};

}  // namespace gpuaas::pod

GPUAAS_PLUGIN(gpuaas::pod::Pod)
