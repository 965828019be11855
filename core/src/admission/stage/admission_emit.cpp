// Admission's decisions leave as the workload plugin's patches: an admission carries its
// placement (the hint the bridge binds pods by), a preemption suspends. Then every workload
// whose queue reason changed gets a status event.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "admission/stage/admission_inputs.hpp"
#include "admission/stage/admission_stage.hpp"
#include "admission/stage/queue_metrics.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/decision_sink.hpp"

namespace gpuaas::core {

namespace {

using nlohmann::json;

json placement_json(const admission::Decision& d, const std::vector<std::string>& pod_sets) {
  json sets = json::array();
  for (std::size_t i = 0; i < d.placement.groups.size(); ++i) {
    json nodes = json::object();
    for (const auto& [node, count] : d.placement.groups[i].nodes) nodes[node] = count;
    sets.push_back({{"podSet", i < pod_sets.size() ? pod_sets[i] : std::to_string(i)},
                    {"count", i < d.counts.size() ? d.counts[i] : 0},
                    {"nodes", std::move(nodes)}});
  }
  return {{"flavor", d.flavor}, {"podSets", std::move(sets)}};
}

v1::ActionRequest request_of(const admission::Decision& d, wire::EventTime now) {
  v1::ActionRequest req;
  for (const auto& [k, v] : d.node_labels) (*req.mutable_node_labels())[k] = v;
  for (const auto& t : d.tolerations) req.add_tolerations_json(t.json());
  req.set_flavor(d.flavor);
  req.set_reason(d.reason);
  wire::set_time(*req.mutable_time(), now);
  return req;
}

}  // namespace

void AdmissionStage::count(const admission::Decision& d, wire::EventTime now) {
  const bool admit = d.kind == admission::Decision::Kind::kAdmit;
  if (decisions_)
    decisions_->Add({{"kind", admit ? "admit" : "preempt"}, {"rule", d.rule}}).Increment();
  if (admit) {
    admitted_.insert(d.workload);
    if (d.rule == "reclaim/wake") return;  // admitted long ago; its wait was counted then
    auto it = first_seen_.find(d.workload);
    const double waited =
        it == first_seen_.end()
            ? 0.0
            : std::chrono::duration<double>(now - to_event_time(it->second)).count();
    queue_metrics_.admitted(d.cluster_queue, waited);
  } else {
    queue_metrics_.evicted(d.cluster_queue, d.rule,
                           d.preemptor.empty() ? "" : engine_->cluster_queue_of(d.preemptor));
    admitted_.erase(d.workload);
  }
}

void AdmissionStage::emit(const ClusterModel& model, std::vector<admission::Decision> ds,
                          DecisionSink& sink, const Hooks& hooks) {
  const wire::EventTime now = model.now();
  for (const auto& d : ds) {
    const KubeObject* obj = model.object(d.workload);
    if (!obj) continue;
    const bool admit = d.kind == admission::Decision::Kind::kAdmit;
    count(d, now);
    v1::ActionRequest req = request_of(d, now);
    std::vector<std::string> pod_sets;
    if (const auto* v = model.view_of(d.workload); v && v->demand)
      for (const auto& ps : v->demand->pod_sets()) pod_sets.push_back(ps.name());
    const std::string hint = admit ? placement_json(d, pod_sets).dump() : std::string();
    if (hooks.placed)
      for (auto& h : hooks.placed(d, pod_sets)) req.add_preferred_hostnames(std::move(h));
    if (admit) {
      admit_requests_[d.workload] = {req.SerializeAsString(), hint};
    } else {
      admit_requests_.erase(d.workload);
      reissue_.erase(d.workload);
    }
    const WorkloadAction action = admit ? hooks.admit_action(d.workload) : WorkloadAction::kSuspend;
    if (!sink.publish(*obj, action, req, d.rule, hint) && !admit) {
      // Already stopped as far as the model knows (its admission not applied yet): no patch will
      // come back, so it counts as stopped now and queues again.
      spdlog::info("{} {}/{}: preempted while already stopped; queued again", obj->meta.kind,
                   obj->meta.namespace_, obj->meta.name);
      hooks.requeue(d.workload);
    }
  }
  // Queue status for dashboards: every workload whose reason changed.
  for (const auto& key : engine_->take_status_changes()) {
    const KubeObject* obj = model.object(key);
    if (!obj) continue;
    const auto x =
        engine_->explain(key, std::chrono::time_point_cast<std::chrono::milliseconds>(now));
    if (!x.known) continue;
    sink.publish_status(*obj, x);
  }
  emit_unqueued(model, sink);
}

}  // namespace gpuaas::core
