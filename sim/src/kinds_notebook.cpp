// Notebook (Kubeflow notebook controller, kubeflow.org/v1): one pod, `<name>-0` of a StatefulSet.
// A notebook has no suspend flag; it is held by the controller's `kubeflow-resource-stopped`
// annotation (StatefulSet at 0 replicas while present), which the workbench plugin's ADMIT
// removes, putting the flavor's node labels into spec.template.spec. SUSPEND and SCALE_TO_ZERO
// both set it again, so to the controller, and to admitted(), a notebook scaled to zero is a
// stopped notebook: the difference lives only in gpuaas's record on the object.
#include "kinds_common.hpp"

namespace gpuaas::sim::kinds {
namespace {

constexpr const char* kStop = "kubeflow-resource-stopped";

bool stopped(const json& o) {
  const json* a = find(o, "/metadata/annotations");
  return a != nullptr && a->is_object() && a->contains(kStop);
}

class NotebookModel final : public KindModel {
 public:
  std::string_view kind() const override { return "Notebook"; }
  std::string_view api_version() const override { return "kubeflow.org/v1"; }
  bool finishes() const override { return false; }

  json make_object(const WorkloadSpec& spec) const override {
    require_pods(spec, 1, /*exact=*/true);
    json o = object_head(spec, api_version(), kind());
    // The value is a time (when it stopped), which the simulator does not know here; the
    // controller acts on presence only. The plugin writes the same value when it has no time.
    o["metadata"]["annotations"][kStop] = "1970-01-01T00:00:00Z";
    // The controller finds the notebook container by the notebook's name.
    o["spec"] = {
        {"template",
         {{"spec",
           {{"containers", json::array({container(spec.name,
                                                  "ghcr.io/kubeflow/kubeflow/notebook-servers/"
                                                  "jupyter-pytorch-cuda:latest",
                                                  spec)})}}}}}};
    return o;
  }

  bool admitted(const json& o) const override { return !stopped(o); }

  std::vector<PodShape> pods(const json& o) const override {
    const json* pod_spec = find(o, "/spec/template/spec");
    if (stopped(o) || pod_spec == nullptr) return {};
    return {shape_of("notebook", 1, *pod_spec)};
  }

  // What the controller copies from its StatefulSet (readyReplicas) and pod (containerState,
  // conditions). A failing notebook is a container in CrashLoopBackOff: the pod stays bound and
  // holds its GPU, so the plugin reads it as PENDING, never FAILED (see its README).
  void set_phase(json& o, Phase phase) const override {
    json status;
    switch (phase) {
      case Phase::kPending:
        status = {{"readyReplicas", 0},
                  {"containerState", {{"waiting", {{"reason", "ContainerCreating"}}}}},
                  {"conditions", json::array()}};
        break;
      case Phase::kRunning:
        status = {{"readyReplicas", 1},
                  {"containerState", {{"running", {{"startedAt", stamp(o)}}}}},
                  {"conditions",
                   {{{"type", "Ready"}, {"status", "True"}},
                    {{"type", "ContainersReady"}, {"status", "True"}},
                    {{"type", "PodScheduled"}, {"status", "True"}}}}};
        break;
      case Phase::kFailed:
        status = {{"readyReplicas", 0},
                  {"containerState",
                   {{"waiting",
                     {{"reason", "CrashLoopBackOff"},
                      {"message", "back-off restarting failed container"}}}}},
                  {"conditions", json::array()}};
        break;
      case Phase::kSucceeded:
        no_such_phase(kind(), phase);
    }
    o["status"] = std::move(status);
  }
};

}  // namespace

const KindModel& notebook_model() {
  static const NotebookModel model;
  return model;
}

}  // namespace gpuaas::sim::kinds
