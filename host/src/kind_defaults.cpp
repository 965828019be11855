#include "kind_defaults.hpp"

#include <cctype>
#include <string_view>

namespace gpuaas::host::plugin {
namespace {

struct Default {
  std::string_view group;
  std::string_view kind;
  std::string_view plural;
  KindHold::Type hold;
  std::string_view target;
  std::string_view value;
  bool any_value;
  bool session;
};

using H = KindHold::Type;

// The workbench plugin's stop value when there is no event time: a webhook has none, and the
// value must not depend on the wall clock. Any value of the annotation already stops a notebook.
constexpr std::string_view kNotebookStop = "1970-01-01T00:00:00Z";

// By API group and kind, any version (as the bridge's hold rules were). Pods by owner chain for
// all: that is how the core found them before 1.1.
constexpr Default kDefaults[] = {
    {"batch", "Job", "jobs", H::kSetTrue, "/spec/suspend", "", false, false},
    {"ray.io", "RayJob", "rayjobs", H::kSetTrue, "/spec/suspend", "", false, false},
    {"ray.io", "RayCluster", "rayclusters", H::kSetTrue, "/spec/suspend", "", false, false},
    {"trainer.kubeflow.org", "TrainJob", "trainjobs", H::kSetTrue, "/spec/suspend", "", false,
     false},
    {"kubeflow.org", "PyTorchJob", "pytorchjobs", H::kSetTrue, "/spec/runPolicy/suspend", "", false,
     false},
    {"kubeflow.org", "TFJob", "tfjobs", H::kSetTrue, "/spec/runPolicy/suspend", "", false, false},
    {"kubeflow.org", "MPIJob", "mpijobs", H::kSetTrue, "/spec/runPolicy/suspend", "", false, false},
    {"kubeflow.org", "Notebook", "notebooks", H::kAnnotation, "kubeflow-resource-stopped",
     kNotebookStop, true, true},
    {"serving.kserve.io", "InferenceService", "inferenceservices", H::kAnnotation,
     "serving.kserve.io/stop", "true", false, false},
    {"", "Pod", "pods", H::kSchedulingGate, "kueue.x-k8s.io/admission", "", false, false},
};

}  // namespace

void apply_1_0_defaults(PluginKind& kind) {
  kind.declared = false;
  kind.namespaced = true;
  kind.session = false;
  kind.queued_only = false;
  kind.pod_label.clear();
  kind.hold = {};
  for (const auto& d : kDefaults) {
    if (d.group != kind.group || d.kind != kind.kind) continue;
    kind.plural = d.plural;
    kind.hold = {d.hold, std::string(d.target), std::string(d.value), d.any_value};
    kind.session = d.session;
    // A Pod is a workload only when queued: every other Pod is only counted on its node.
    kind.queued_only = d.kind == "Pod";
    kind.binding = default_binding(kind.session);
    return;
  }
  kind.plural.clear();
  for (char c : kind.kind) {
    kind.plural += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  kind.plural += 's';
  kind.binding = default_binding(kind.session);
}

KindBinding default_binding(bool session) {
  return session ? KindBinding::kPreferred : KindBinding::kRequired;
}

}  // namespace gpuaas::host::plugin
