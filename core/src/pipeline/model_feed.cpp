// What the model's changes mean to each stage: nodes and the pods of queued workloads to
// admission; workload objects to cost (outcomes), idle reclaim (a user starting one held at
// zero) and admission (the queue), in that order, since reclaim decides whether admission may
// take a workload in.
#include "admission/stage/admission_inputs.hpp"
#include "pipeline/pipeline_stages.hpp"

namespace gpuaas::core {
namespace {

// scheduling.k8s.io PriorityClasses (cluster-scoped) in the model, by ClusterModel::key_of.
constexpr std::string_view kPriorityClassKeyPrefix = "scheduling.k8s.io/PriorityClass//";

}  // namespace

void DecisionPipeline::Stages::feed(const std::vector<ModelChange>& changes, ClusterModel& model) {
  const std::string& kPolicyKey = Stages::policy_key();
  for (const auto& ch : changes) {
    switch (ch.category) {
      case ModelChange::Category::kNode:
        upsert_node(model, ch.key);
        break;
      case ModelChange::Category::kPod:
        plan_for_pod(model, ch.key);
        admission.update_pod(model, ch, binding);
        binding.pod_changed(model, ch.key);
        if (!ch.node.empty()) upsert_node(model, ch.node);
        break;
      case ModelChange::Category::kObject:
        if (ch.key == kPolicyKey) break;
        if (ch.change == wire::ChangeType::kDeleted) {
          remove_object(model, ch.key);
        } else if (const KubeObject* o = model.object(ch.key)) {
          upsert_object(model, ch.key, *o);
        }
        break;
    }
  }
}

void DecisionPipeline::Stages::upsert_node(const ClusterModel& model, const std::string& name) {
  admission.upsert_node(model, name, scale_out.cordoned(name));
}

void DecisionPipeline::Stages::upsert_object(const ClusterModel& model, const std::string& key,
                                             const KubeObject& obj) {
  if (obj.meta.kind == "Namespace" && obj.meta.api_version == "v1") {
    admission.set_namespace(obj, to_time(model.now()));
    return;
  }
  if (obj.meta.kind == "PriorityClass" && key.rfind(kPriorityClassKeyPrefix, 0) == 0) {
    admission.set_priority_class(obj, to_time(model.now()));
    return;
  }
  const WorkloadView* view = model.view_of(key);
  if (!view) return;
  binding.workload_changed(key);
  serving_scale.object_changed(key, obj);
  if (view->lifecycle && view->lifecycle->state() == v1::WorkloadLifecycle::SUCCEEDED)
    cost.succeeded(key, obj, admission.engine().cluster_queue_of(key));
  reclaim.object_changed(model, key, obj, admission, sink, pending);
  if (reclaim.holds_out(key)) return;
  if (admission.upsert_workload(model, key, obj, *view, reclaim.waking_demand(key),
                                reclaim.gate_of(obj, *view) != nullptr))
    reclaim.gate_candidate(key);
}

void DecisionPipeline::Stages::remove_object(const ClusterModel& model, const std::string& key) {
  if (key.rfind(kPriorityClassKeyPrefix, 0) == 0) {
    admission.forget_priority_class(key.substr(key.rfind('/') + 1), to_time(model.now()));
    return;
  }
  cost.forget(key);
  reclaim.forget(key);
  serving_scale.forget(key);
  binding.forget(key);
  admission.forget(key, to_time(model.now()));
}

bool DecisionPipeline::Stages::ensure_plan(const ClusterModel& model, const std::string& w) {
  if (binding.has_plan(w)) return true;
  // The engine's placement first (a snapshot keeps it, and node accounting follows it), else
  // what the admission wrote on the object (a restart without a snapshot).
  if (auto placed = admission.engine().placement_of(w)) {
    const WorkloadView* v = model.view_of(w);
    std::vector<std::string> sets;
    if (v && v->demand)
      for (const auto& ps : v->demand->pod_sets()) sets.push_back(ps.name());
    binding.placed(w, placed->second, sets,
                   binding.mode(placed->first, v ? v->binding : policy::Binding::kRequired));
    return true;
  }
  return binding.adopt(model, w);
}

void DecisionPipeline::Stages::plan_for_pod(const ClusterModel& model, const std::string& key) {
  const KubeObject* pod = model.pod(key);
  if (!pod || !pod->pod || (pod->pod->node_name.empty() && !pod->pod->gated)) return;
  const std::string w = model.workload_of(*pod);
  if (!w.empty() && admission.engine().running(w)) ensure_plan(model, w);
}

AdmissionStage::Hooks DecisionPipeline::Stages::hooks(const ClusterModel& model) {
  return {[this, &model](const std::string& key) { return reclaim.admit_action(model, key); },
          [this, &model](const std::string& key) {
            if (const KubeObject* o = model.object(key)) upsert_object(model, key, *o);
          },
          [this, &model](const admission::Decision& d, const std::vector<std::string>& pod_sets) {
            if (d.kind == admission::Decision::Kind::kAdmit) {
              // The kind's plugin says how its pods bind (serving and notebooks: preferred).
              const WorkloadView* v = model.view_of(d.workload);
              const auto kind_default = v ? v->binding : policy::Binding::kRequired;
              binding.placed(d.workload, d.placement, pod_sets,
                             binding.mode(d.flavor, kind_default));
              return binding.preferred_hostnames(model, d.workload);
            }
            binding.forget(d.workload);
            return std::vector<std::string>{};
          }};
}

}  // namespace gpuaas::core
