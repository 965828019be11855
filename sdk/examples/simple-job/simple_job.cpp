// A small batch-like kind, end to end: demand from a pod template and a parallelism, lifecycle
// from conditions, admission through spec.suspend, activity from GPU utilisation.
//
//   apiVersion: batch.example.com/v1alpha1
//   kind: SimpleJob
//   spec: {suspend: true, parallelism: 2, template: {spec: {containers: [...]}}}
#include "gpuaas/plugin/sdk.hpp"

namespace {

using gpuaas::plugin::Guard;
using gpuaas::plugin::Json;
using gpuaas::plugin::Patch;
using gpuaas::plugin::Samples;
using gpuaas::plugin::Workload;
namespace v1 = gpuaas::v1;

class SimpleJob {
 public:
  static constexpr gpuaas::plugin::Info info{"simple-job", "0.1.0",
                                             gpuaas::plugin::Stability::kAlpha};
  static constexpr gpuaas::plugin::Kind kinds[] = {{"batch.example.com", "v1alpha1", "SimpleJob"}};

  // Configuration comes from gpuaasd as JSON; reject what is not understood.
  explicit SimpleJob(const Json& config) {
    for (const auto& [key, value] : config.items()) {
      if (key != "gpu_util_threshold" || !value.is_number()) {
        throw gpuaas::plugin::InvalidInput("unknown or mistyped setting: " + key);
      }
      threshold_ = value.get<double>();
    }
  }

  v1::WorkloadDemand demand(const Workload& w) {
    v1::WorkloadDemand d = gpuaas::plugin::demand_of(w);  // queue and priority class
    int64_t parallelism = w.count_at("/spec/parallelism", 1);
    if (parallelism > INT32_MAX) {
      throw gpuaas::plugin::InvalidInput("/spec/parallelism: more than 2^31-1");
    }
    *d.add_pod_sets() =
        gpuaas::plugin::pod_set("main", parallelism, w.at(kSpec), kSpec);
    return d;
  }

  v1::WorkloadLifecycle lifecycle(const Workload& w) {
    v1::WorkloadLifecycle l;
    if (w.condition_true("Complete")) {
      l.set_state(v1::WorkloadLifecycle::SUCCEEDED);
    } else if (w.condition_true("Failed")) {
      l.set_state(v1::WorkloadLifecycle::FAILED);
    } else if (w.flag_at("/spec/suspend", false)) {
      l.set_state(v1::WorkloadLifecycle::SUSPENDED);
    } else if (w.count_at("/status/active", 0) > 0) {
      l.set_state(v1::WorkloadLifecycle::RUNNING);
    } else {
      l.set_state(v1::WorkloadLifecycle::PENDING);
    }
    return l;
  }

  // Admission: the flavor's node labels and tolerations go into the pod template (the original
  // is kept on the object), then the job may start. The patch is guarded by resourceVersion.
  Patch admit(const Workload& w, const v1::ActionRequest& r) {
    Json o = w.json();
    gpuaas::plugin::apply_flavor(o, kTemplates, r);
    o["spec"]["suspend"] = false;
    return Patch::between(w, o, Guard::kResourceVersion);
  }

  Patch suspend(const Workload& w, const v1::ActionRequest&) {
    Json o = w.json();
    gpuaas::plugin::restore_templates(o);
    o["spec"]["suspend"] = true;
    return Patch::between(w, o, Guard::kResourceVersion);
  }

  v1::WorkloadActivity activity(const Workload&, const Samples& samples) {
    bool seen = false;
    int64_t last = 0;
    for (const auto& s : samples) {
      if (s.name() != "DCGM_FI_DEV_GPU_UTIL") continue;
      seen = true;
      if (s.value() > threshold_) last = std::max(last, s.timestamp_ms());
    }
    if (last > 0) return gpuaas::plugin::active("GPU utilisation above threshold", last);
    if (seen) return gpuaas::plugin::idle("GPU utilisation at or below threshold");
    return gpuaas::plugin::unknown_activity("no GPU samples");
  }

 private:
  static inline const std::string kSpec = "/spec/template/spec";
  static inline const std::vector<std::string> kTemplates = {kSpec};
  double threshold_ = 5;
};

}  // namespace

GPUAAS_PLUGIN(SimpleJob)
