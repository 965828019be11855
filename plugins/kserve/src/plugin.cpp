// The kserve plugin: KServe InferenceServices (serving.kserve.io/v1beta1).
#include "gpuaas/plugin/sdk.hpp"
#include "kserve.hpp"

namespace gpuaas::kserve {

class KServePlugin {
 public:
  static constexpr plugin::Info info{"kserve", "0.1.0", plugin::Stability::kAlpha};
  // Held by the stop annotation suspend() writes (every component's pods go, whatever the
  // deployment mode); admit() removes it. Its pods sit under Deployments or Knative revisions the
  // bridge does not watch, so they are found by KServe's label. Binding preferred: an autoscaler
  // adds and removes its pods, so none waits behind a placement gate.
  static constexpr plugin::Kind kinds[] = {
      {.group = "serving.kserve.io",
       .version = "v1beta1",
       .kind = "InferenceService",
       .plural = "inferenceservices",
       .hold = plugin::Hold::annotation("serving.kserve.io/stop", "true"),
       .pods = plugin::Pods::by_label("serving.kserve.io/inferenceservice"),
       .binding = plugin::Binding::kPreferred}};

  explicit KServePlugin(const plugin::Json& config) : config_(parse_config(config)) {}

  v1::WorkloadDemand demand(const plugin::Workload& w) {
    return kserve::demand(checked(w), config_);
  }
  v1::WorkloadLifecycle lifecycle(const plugin::Workload& w) {
    return kserve::lifecycle(checked(w));
  }
  plugin::Patch admit(const plugin::Workload& w, const v1::ActionRequest& r) {
    return kserve::admit(checked(w), r, config_);
  }
  plugin::Patch suspend(const plugin::Workload& w, const v1::ActionRequest&) {
    return kserve::suspend(checked(w), config_);
  }
  plugin::Patch scale_to_zero(const plugin::Workload& w, const v1::ActionRequest&) {
    return kserve::scale_to_zero(checked(w), config_);
  }
  plugin::Patch set_scale(const plugin::Workload& w, const v1::ActionRequest& r) {
    return kserve::set_scale(checked(w), r, config_);
  }
  plugin::Patch scale_back(const plugin::Workload& w, const v1::ActionRequest&) {
    return kserve::scale_back(checked(w), config_);
  }
  v1::WorkloadActivity activity(const plugin::Workload& w, const plugin::Samples& s) {
    return kserve::activity(checked(w), s, config_);
  }

 private:
  // Another kind (an LLMInferenceService, say) has other fields: refuse it rather than misread it.
  static const plugin::Workload& checked(const plugin::Workload& w) {
    if (w.kind() != "InferenceService" || w.api_version().rfind("serving.kserve.io/", 0) != 0) {
      throw plugin::InvalidInput(
          "/kind: the kserve plugin reads serving.kserve.io "
          "InferenceService, not " +
          w.api_version() + " " + w.kind());
    }
    return w;
  }

  Config config_;
};

}  // namespace gpuaas::kserve

GPUAAS_PLUGIN(gpuaas::kserve::KServePlugin)
