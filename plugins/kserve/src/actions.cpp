// Admission, suspension and scale to zero as merge patches.
//
// Suspension is KServe's stop annotation: it removes every component's pods whatever the mode.
// Scale to zero is chosen per object so as never to fight the autoscaler that owns the replica
// count: in Knative mode minReplicas 0 lets Knative remove idle pods and bring one back on the
// next request; in Standard mode HPA/KEDA keep at least one pod, so the service is stopped.
// What each changed is recorded by scale_to, so scale_back restores the owner's values exactly
// (a stop annotation the user had set stays set).
//
// The autoscaler's bounds (set_scale) go on the predictor, the component that takes requests,
// in the fields KServe reads: minReplicas and maxReplicas always; in Knative mode also
// scaleMetric rps and scaleTarget, which Knative's autoscaler (KPA) follows between them, with the
// revision's target utilisation at 100%: KPA aims at target x utilisation (70% by default, for rps
// too), and the target gpuaas sends already keeps its headroom. HPA scales on CPU or memory only,
// so in Standard mode the target is left as the owner set it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "annotations.hpp"
#include "components.hpp"
#include "deployment_mode.hpp"
#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/pod_templates.hpp"
#include "kserve.hpp"

namespace gpuaas::kserve {
namespace {

using plugin::Guard;
using plugin::Json;
using plugin::Patch;

void require_own_pods(const plugin::Workload& w, const Config& config, const char* action) {
  if (deployment_mode(w, config.default_mode) == DeploymentMode::kModelMesh) {
    throw plugin::NotSupported(std::string(action) +
                               ": a ModelMesh InferenceService has no pods of its own");
  }
}

}  // namespace

Patch admit(const plugin::Workload& w, const v1::ActionRequest& r, const Config& config) {
  require_own_pods(w, config, "admit");
  Json o = w.json();
  plugin::apply_flavor(o, pod_spec_pointers(w), r);
  if (stopped(w)) plugin::erase_annotation(o, kStopAnnotation);
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch suspend(const plugin::Workload& w, const Config& config) {
  require_own_pods(w, config, "suspend");
  Json o = w.json();
  plugin::restore_templates(o);
  if (!stopped(w)) plugin::mutable_annotations(o)[kStopAnnotation] = "true";
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch scale_to_zero(const plugin::Workload& w, const Config& config) {
  require_own_pods(w, config, "scale to zero");
  if (stopped(w)) return {};  // no pods run: nothing to scale
  Json o = w.json();
  std::vector<std::string> pointers;
  if (deployment_mode(w, config.default_mode) == DeploymentMode::kKnative) {
    for (const auto& c : components(w)) {
      std::string ptr = c.pointer + "/minReplicas";
      if (int32_at(w, ptr, 1) != 0) pointers.push_back(ptr);
    }
    if (pointers.empty()) return {};  // Knative already scales every component to zero
    plugin::scale_to(o, pointers, Json(0));
  } else {
    pointers.push_back(annotation_pointer(kStopAnnotation));
    plugin::scale_to(o, pointers, Json("true"));
  }
  // The record and the values must change together: a concurrent edit of minReplicas or of the
  // stop annotation would otherwise be lost or restored wrongly.
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch scale_back(const plugin::Workload& w, const Config& config) {
  require_own_pods(w, config, "scale back");
  Json o = w.json();
  if (!plugin::scale_back(o)) return {};  // nothing was scaled down by gpuaas
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch set_scale(const plugin::Workload& w, const v1::ActionRequest& r, const Config& config) {
  require_own_pods(w, config, "set scale");
  if (!r.has_scale()) throw plugin::InvalidInput("set scale: the request has no scale bounds");
  const v1::ScaleBounds& b = r.scale();
  if (b.min_replicas() < 0 || b.max_replicas() < 0 ||
      (b.max_replicas() > 0 && b.max_replicas() < b.min_replicas())) {
    throw plugin::InvalidInput("set scale: bounds " + std::to_string(b.min_replicas()) + ".." +
                               std::to_string(b.max_replicas()) + " are not a range");
  }
  Json o = w.json();
  Json& predictor = *plugin::locate(o, "/spec/predictor", true);
  // At zero by gpuaas (or stopped) the idle rules own minReplicas: scale_back restores it.
  const bool at_zero = stopped(w) || w.has_annotation(plugin::kScaledFromAnnotation);
  if (!at_zero) predictor["minReplicas"] = b.min_replicas();
  if (b.max_replicas() > 0) predictor["maxReplicas"] = b.max_replicas();
  if (deployment_mode(w, config.default_mode) == DeploymentMode::kKnative && b.target() > 0 &&
      b.metric() == "rps") {
    predictor["scaleMetric"] = "rps";
    // KServe's scaleTarget is an integer: rounded down, so a replica is not given more.
    predictor["scaleTarget"] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(b.target())));
    // KServe copies the InferenceService's annotations to the Knative revision.
    plugin::mutable_annotations(o)[kTargetUtilizationAnnotation] = "100";
  }
  return Patch::between(w, o, Guard::kResourceVersion);
}

}  // namespace gpuaas::kserve
