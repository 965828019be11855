// TrainJob (trainer.kubeflow.org/v1alpha1). The pods come from a (Cluster)TrainingRuntime that
// the plugin never sees: demand is the trainer step only, spec.trainer.numNodes pods of
// spec.trainer.resourcesPerNode; initializer jobs and anything else the runtime adds are not
// counted. Admission cannot edit the runtime's templates either, so, like Kueue, it appends an
// override for the trainer job (spec.podSpecOverrides) carrying the flavor's node labels and
// tolerations, keeping the original list in an annotation for suspension to put back.
#include <algorithm>

#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {
namespace {

// JSON of {"field": "podSpecOverrides", "value": <the list before admission, or null>}.
constexpr const char* kOriginalOverrides = "gpuaas.io/original-pod-overrides";
constexpr const char* kResources = "/spec/trainer/resourcesPerNode";

Json& spec_of(Json& o) {
  Json& spec = o["spec"];
  if (!spec.is_object()) throw plugin::InvalidInput("/spec: not an object");
  return spec;
}

// Puts back the overrides list recorded by an earlier admission; no record: no change.
void restore_overrides(Json& o) {
  const Workload w(o);
  if (!w.has_annotation(kOriginalOverrides)) return;
  Json saved = Json::parse(w.annotation(kOriginalOverrides), nullptr, false);
  if (saved.is_object() && saved.value("field", "") != "" && saved.contains("value")) {
    Json& spec = spec_of(o);
    const std::string field = saved["field"];
    if (saved["value"].is_null()) {
      spec.erase(field);
    } else {
      spec[field] = saved["value"];
    }
  }
  plugin::erase_annotation(o, kOriginalOverrides);
  plugin::erase_annotation(o, plugin::kFlavorAnnotation);
}

}  // namespace

bool is_trainjob(const Workload& w) {
  return w.kind() == "TrainJob" && w.api_version() == "trainer.kubeflow.org/v1alpha1";
}

v1::WorkloadDemand trainjob_demand(const Workload& w, const Config& config) {
  if (!w.at("/spec").is_object()) throw plugin::InvalidInput("/spec: not an object");
  if (const Json* t = w.find("/spec/trainer"); t != nullptr && !t->is_null() && !t->is_object()) {
    throw plugin::InvalidInput("/spec/trainer: not an object");
  }
  // numNodes defaults to the runtime's mlPolicy.numNodes, which is not visible here: 1.
  const int64_t count = w.int32_count_at("/spec/trainer/numNodes", 1);
  Json resources = Json::object();
  if (const Json* r = w.find(kResources); r != nullptr && !r->is_null()) {
    if (!r->is_object()) throw plugin::InvalidInput(std::string(kResources) + ": not an object");
    resources = *r;
  }
  // One container with the per-node requirements; errors name the TrainJob's own field.
  const std::string where = "/spec/trainer";
  Json pod_spec = {{"containers", Json::array({{{"name", "node"}, {"resources", resources}}})}};
  v1::WorkloadDemand d = plugin::demand_of(w);
  try {
    *d.add_pod_sets() = plugin::pod_set(config.trainjob_trainer_job, count, pod_spec, where);
  } catch (const plugin::InvalidInput& e) {
    std::string msg = e.what();
    const std::string synthetic = where + "/containers/0/resources";
    if (msg.rfind(synthetic, 0) == 0) msg.replace(0, synthetic.size(), kResources);
    throw plugin::InvalidInput(msg);
  }
  return d;
}

plugin::Patch trainjob_admit(const Workload& w, const Config& config,
                             const v1::ActionRequest& request) {
  w.flag_at("/spec/suspend", false);
  Json o = w.json();
  restore_overrides(o);  // a re-admission replaces the previous flavor
  Json& spec = spec_of(o);
  const std::string field =
      spec.contains("podTemplateOverrides") ? "podTemplateOverrides" : config.trainjob_overrides;
  Json original = spec.value(field, Json());
  if (!original.is_null() && !original.is_array()) {
    throw plugin::InvalidInput("/spec/" + field + ": not a list");
  }
  Json placement = Json::object();
  if (!request.node_labels().empty()) {
    placement["nodeSelector"] = Json::object();
    for (const auto& [k, v] : request.node_labels()) placement["nodeSelector"][k] = v;
  }
  for (const auto& t : request.tolerations_json()) {
    Json tol = Json::parse(t, nullptr, false);
    if (tol.is_discarded() || !tol.is_object()) {
      throw plugin::InvalidInput("action request: toleration is not a JSON object: " + t);
    }
    Json& list = placement["tolerations"];
    if (list.is_null()) list = Json::array();
    if (std::find(list.begin(), list.end(), tol) == list.end()) list.push_back(std::move(tol));
  }
  if (!placement.empty()) {
    Json entry = {{"targetJobs", Json::array({{{"name", config.trainjob_trainer_job}}})}};
    if (field == "podTemplateOverrides") {
      entry["spec"] = placement;
    } else {
      entry.update(placement);
    }
    Json list = original.is_null() ? Json::array() : original;
    list.push_back(std::move(entry));
    spec[field] = std::move(list);
  }
  Json& a = plugin::mutable_annotations(o);
  a[kOriginalOverrides] = Json{{"field", field}, {"value", original}}.dump();
  if (!request.flavor().empty()) a[plugin::kFlavorAnnotation] = request.flavor();
  spec_of(o)["suspend"] = false;
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

plugin::Patch trainjob_suspend(const Workload& w) {
  w.flag_at("/spec/suspend", false);
  Json o = w.json();
  restore_overrides(o);
  spec_of(o)["suspend"] = true;
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

}  // namespace gpuaas::kubeflow_training
