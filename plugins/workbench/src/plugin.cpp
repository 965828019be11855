// The workbench plugin: Kubeflow Notebooks. The class only routes to the functions in
// workbench.hpp; each concept lives in its own file.
#include "workbench.hpp"

namespace gpuaas::workbench {
namespace {

class Workbench {
 public:
  static constexpr plugin::Info info{"workbench", "0.1.0", plugin::Stability::kStable};
  // The same fields in both versions (v1beta1 is what some samples and older installs use).
  // A session (NotebookPolicy applies). Held by the stop annotation with the value suspend()
  // writes without an event time (a webhook has none); the notebook controller reads presence, so
  // any value already holds it. Its pods sit under a StatefulSet the bridge does not watch: found
  // by the controller's notebook-name label. v1 first: the bridge watches the first version.
  // Binding preferred, as for any session: its pod comes and goes with its user.
  static constexpr plugin::Kind kinds[] = {
      {.group = "kubeflow.org",
       .version = "v1",
       .kind = "Notebook",
       .plural = "notebooks",
       .hold = plugin::Hold::annotation("kubeflow-resource-stopped", "1970-01-01T00:00:00Z", true),
       .pods = plugin::Pods::by_label("notebook-name"),
       .session = true,
       .binding = plugin::Binding::kPreferred},
      {.group = "kubeflow.org",
       .version = "v1beta1",
       .kind = "Notebook",
       .plural = "notebooks",
       .hold = plugin::Hold::annotation("kubeflow-resource-stopped", "1970-01-01T00:00:00Z", true),
       .pods = plugin::Pods::by_label("notebook-name"),
       .session = true,
       .binding = plugin::Binding::kPreferred}};

  explicit Workbench(const Json& config) : config_(Config::parse(config)) {}

  v1::WorkloadDemand demand(const plugin::Workload& w) { return workbench::demand(w); }
  v1::WorkloadLifecycle lifecycle(const plugin::Workload& w) { return workbench::lifecycle(w); }

  plugin::Patch admit(const plugin::Workload& w, const v1::ActionRequest& r) {
    return workbench::admit(w, r);
  }
  plugin::Patch suspend(const plugin::Workload& w, const v1::ActionRequest& r) {
    return workbench::suspend(w, r);
  }
  plugin::Patch scale_to_zero(const plugin::Workload& w, const v1::ActionRequest& r) {
    return workbench::scale_to_zero(w, r);
  }
  plugin::Patch scale_back(const plugin::Workload& w, const v1::ActionRequest& r) {
    return workbench::scale_back(w, r);
  }

  v1::WorkloadActivity activity(const plugin::Workload& w, const plugin::Samples& s) {
    return workbench::activity(w, s, config_);
  }

 private:
  Config config_;
};

}  // namespace
}  // namespace gpuaas::workbench

GPUAAS_PLUGIN(gpuaas::workbench::Workbench)
