// Admission of replica-spec kinds as Kueue does it: the flavor goes into every replica
// template's pod spec and spec.runPolicy.suspend turns false; suspension undoes both. The
// patch replaces tolerations lists whole and flips the suspend flag, so it carries the
// resourceVersion: applied to a newer object it would drop someone else's change.
#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {
namespace {

constexpr const char* kSuspend = "/spec/runPolicy/suspend";

void set_suspend(Json& o, bool value) {
  if (const Json* rp = plugin::locate(o, "/spec/runPolicy", false);
      rp != nullptr && !rp->is_null() && !rp->is_object()) {
    throw plugin::InvalidInput("/spec/runPolicy: not an object");
  }
  *plugin::locate(o, kSuspend, true) = value;
}

}  // namespace

plugin::Patch replica_admit(const Workload& w, const ReplicaKind& kind,
                            const v1::ActionRequest& request) {
  std::vector<std::string> pod_specs;
  for (const auto& r : replicas(w, kind)) pod_specs.push_back(r.pod_spec());
  w.flag_at(kSuspend, false);  // a malformed flag is refused, not overwritten
  Json o = w.json();
  plugin::apply_flavor(o, pod_specs, request);
  set_suspend(o, false);
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

plugin::Patch replica_suspend(const Workload& w) {
  w.flag_at(kSuspend, false);
  Json o = w.json();
  plugin::restore_templates(o);
  set_suspend(o, true);
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

}  // namespace gpuaas::kubeflow_training
