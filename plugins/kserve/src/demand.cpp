// Demand: one pod set per component. Replicas follow the autoscaler's lower bound: while serving,
// at least max(minReplicas, 1) pods run (minReplicas 0 still scales up to one on a request), and
// no more are certain, since HPA/KEDA/Knative add pods up to maxReplicas only under load.
#include <algorithm>
#include <string>

#include "components.hpp"
#include "deployment_mode.hpp"
#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/pod_set.hpp"
#include "kserve.hpp"

namespace gpuaas::kserve {
namespace {

// pod_set names the synthetic container by its index in `containers`; name the model spec
// instead, where the user wrote it.
[[noreturn]] void rethrow_at_model(const plugin::InvalidInput& e, const Component& c,
                                   const PodSpecView& view) {
  std::string msg = e.what();
  if (view.model_index >= 0) {
    std::string synthetic = c.pointer + "/containers/" + std::to_string(view.model_index);
    if (msg.rfind(synthetic, 0) == 0 &&
        (msg.size() == synthetic.size() || msg[synthetic.size()] == '/' ||
         msg[synthetic.size()] == ':')) {
      msg = view.model_pointer + msg.substr(synthetic.size());
    }
  }
  throw plugin::InvalidInput(msg);
}

}  // namespace

v1::WorkloadDemand demand(const plugin::Workload& w, const Config& config) {
  if (deployment_mode(w, config.default_mode) == DeploymentMode::kModelMesh) {
    throw plugin::NotSupported(
        "ModelMesh InferenceServices are served by the ServingRuntime's shared pods; they have "
        "no pods of their own");
  }
  if (const auto* worker = w.find("/spec/predictor/workerSpec");
      worker != nullptr && !worker->is_null()) {
    throw plugin::NotSupported(
        "/spec/predictor/workerSpec: multi-node predictors are not supported by this plugin");
  }
  v1::WorkloadDemand d = plugin::demand_of(w);
  for (const auto& c : components(w)) {
    PodSpecView view = pod_spec(w, c);
    int64_t min = min_replicas(w, c);
    max_replicas(w, c);  // validated only: PodSet has no upper bound
    v1::PodSet set;
    try {
      set = plugin::pod_set(c.name, std::max<int64_t>(min, 1), view.spec, c.pointer);
    } catch (const plugin::InvalidInput& e) {
      rethrow_at_model(e, c, view);
    }
    set.set_min_count(min);
    *d.add_pod_sets() = std::move(set);
  }
  return d;
}

}  // namespace gpuaas::kserve
