#include "admission/stage/admission_stage.hpp"

#include <spdlog/spdlog.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "admission/stage/admission_inputs.hpp"
#include "admission/stage/queue_metrics.hpp"
#include "binding/binding_stage.hpp"
#include "gpuaas/base/archive.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pipeline/decision_sink.hpp"

namespace gpuaas::core {

AdmissionStage::AdmissionStage(telemetry::Registry* registry, QueueMetrics& queue_metrics)
    : queue_metrics_(queue_metrics) {
  if (!registry) return;
  bad_annotations_ = &telemetry::BuildCounter()
                          .Name("gpuaas_workload_annotation_errors_total")
                          .Help("gpuaas.io/deadline or expected-duration values that do not parse.")
                          .Register(*registry)
                          .Add({});
  bound_elsewhere_ =
      &telemetry::BuildCounter()
           .Name("gpuaas_pods_bound_elsewhere_total")
           .Help(
               "Pods of admitted workloads that run on a node their placement did not choose; "
               "the node accounting counts them where they run.")
           .Register(*registry)
           .Add({});
  decisions_ = &telemetry::BuildCounter()
                    .Name("gpuaas_admission_decisions_total")
                    .Help("Admission decisions, by kind (admit, preempt) and the rule that fired.")
                    .Register(*registry);
}

AdmissionStage::~AdmissionStage() = default;

bool AdmissionStage::set_policy(std::shared_ptr<const policy::PolicySet> set, admission::Time now) {
  if (engine_) {
    engine_->set_policy(std::move(set), now);
    return false;
  }
  engine_ = std::make_unique<admission::Scheduler>(std::move(set));
  return true;
}

void AdmissionStage::upsert_node(const ClusterModel& model, const std::string& name,
                                 bool cordoned) {
  const auto now = to_time(model.now());
  auto it = model.nodes().find(name);
  if (it == model.nodes().end()) {
    engine_->remove_node(name, now);
    return;
  }
  ResourceList others = model.node_requested(name);
  if (auto m = managed_requests_.find(name); m != managed_requests_.end()) {
    for (const auto& [r, v] : m->second) {
      others[r] -= v;
      if (others[r] <= 0) others.erase(r);
    }
  }
  auto info = node_info(it->second, others, engine_->resources());
  if (cordoned) info.schedulable = false;
  engine_->upsert_node(std::move(info), now);
}

void AdmissionStage::update_pod(const ClusterModel& model, const ModelChange& ch,
                                BindingStage& binding) {
  auto add = [&](const std::string& node, const ResourceList& req, int sign) {
    auto& m = managed_requests_[node];
    for (const auto& [r, v] : req) {
      m[r] += sign * v;
      if (m[r] == 0) m.erase(r);
    }
  };
  if (auto it = managed_pods_.find(ch.key); it != managed_pods_.end()) {
    add(it->second.first, it->second.second, -1);
    managed_pods_.erase(it);
  }
  const KubeObject* pod = model.pod(ch.key);
  if (!pod) bound_elsewhere_seen_.erase(ch.key);
  if (!pod || !pod->pod || pod->pod->node_name.empty() || pod->pod->phase == "Succeeded" ||
      pod->pod->phase == "Failed")
    return;
  const std::string w = model.workload_of(*pod);
  if (w.empty() || !queued_.count(w)) return;
  const std::string& node = pod->pod->node_name;
  const auto set = pod->meta.labels.find(binding::kPodSetLabel);
  const auto b = binding.bound(ch.key, w, set == pod->meta.labels.end() ? "" : set->second, node);
  // Beyond what was admitted: what it holds is real and counted as others' (never under).
  if (!b.in_plan) return;
  if (!b.displaced.empty()) {
    // Bound where admission did not place it (its gate removed by hand, another scheduler, a
    // preferred affinity not met): the placement moves with it, so its planned node is free.
    // A placement that has no pod there to move (its queue went in a reload): counted as
    // others', which may over-count, never under-count.
    if (!engine_->move_pod(w, b.set, b.displaced, node, to_time(model.now()))) return;
    if (bound_elsewhere_seen_.insert(ch.key).second) {
      spdlog::warn("Pod {}: runs on {}, not on {} where {} was placed", ch.key, node, b.displaced,
                   w);
      if (bound_elsewhere_) bound_elsewhere_->Increment();
    }
  }
  managed_pods_[ch.key] = {node, pod->pod->requests};
  add(node, pod->pod->requests, +1);
}

void AdmissionStage::set_namespace(const KubeObject& ns, admission::Time now) {
  policy::LabelMap labels;
  for (const auto& [k, v] : ns.meta.labels) labels.emplace(k, v);
  labels.emplace("kubernetes.io/metadata.name", ns.meta.name);
  engine_->set_namespace_labels(ns.meta.name, std::move(labels), now);
}

void AdmissionStage::set_priority_class(const KubeObject& pc, admission::Time now) {
  const auto j = nlohmann::json::parse(pc.json, nullptr, false);
  const auto v = j.is_object() ? j.find("value") : j.end();
  std::optional<int32_t> value;
  if (!j.is_object() || v == j.end() || !v->is_number_integer() ||
      *v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
    spdlog::warn("PriorityClass {}: value: not a 32-bit integer; its workloads keep priority 0",
                 pc.meta.name);
  } else {
    value = v->get<int32_t>();
  }
  engine_->set_pod_priority_class(pc.meta.name, value, now);
  // globalDefault: the priority of workloads that name no class at all (the empty name).
  const auto g = j.is_object() ? j.find("globalDefault") : j.end();
  if (g != j.end() && g->is_boolean() && g->get<bool>()) {
    global_default_ = pc.meta.name;
    engine_->set_pod_priority_class("", value, now);
  } else if (global_default_ == pc.meta.name) {
    global_default_.clear();
    engine_->set_pod_priority_class("", std::nullopt, now);
  }
}

void AdmissionStage::forget_priority_class(const std::string& name, admission::Time now) {
  engine_->set_pod_priority_class(name, std::nullopt, now);
  if (global_default_ == name) {
    global_default_.clear();
    engine_->set_pod_priority_class("", std::nullopt, now);
  }
}

bool AdmissionStage::upsert_workload(const ClusterModel& model, const std::string& key,
                                     const KubeObject& obj, const WorkloadView& view,
                                     const admission::WorkloadInfo* waking_demand, bool gated) {
  const auto now = to_time(model.now());
  auto [first, inserted] = first_seen_.emplace(key, now);
  std::string error;
  // One being evicted has started as much as an admitted one: until its object is seen stopped
  // (suspended, deleted pods), it keeps its quota, or it would be admitted again meanwhile.
  const bool started = admitted_.count(key) > 0 || engine_->evicting(key);
  auto info = workload_info(obj, view, started, first->second, engine_->resources(), &error);
  if (!error.empty()) {
    spdlog::warn("{} {}/{}: {}", obj.meta.kind, obj.meta.namespace_, obj.meta.name, error);
    if (bad_annotations_) bad_annotations_->Increment();
  }
  if (!info) {
    if (queued_.erase(key)) engine_->remove_workload(key, now);
    note_unqueued(key, obj, view);
    return false;
  }
  if (unqueued_.erase(key)) unqueued_changed_.erase(key);
  info->key = key;
  if (waking_demand) {
    info->pod_sets = waking_demand->pod_sets;
    info->observed = admission::ObservedState::kWaiting;
  }
  bool candidate = false;
  if (!admitted_.count(key) && gated) {
    // Started on its own: it waits like the rest until admitted.
    if (info->observed == admission::ObservedState::kRunning)
      info->observed = admission::ObservedState::kWaiting;
    candidate = true;
  }
  queued_.insert(key);
  engine_->upsert_workload(std::move(*info), now);
  return candidate;
}

void AdmissionStage::note_unqueued(const std::string& key, const KubeObject& obj,
                                   const WorkloadView& view) {
  const bool labelled = obj.meta.labels.count(kQueueNameLabel) > 0;
  if (!labelled || (view.demand && view.demand->queue_name().empty() && view.error.empty())) {
    unqueued_.erase(key);
    return;
  }
  std::pair<std::string, std::string> why = {
      obj.members.empty() ? "Inadmissible" : "GroupNotReady",
      view.error.empty() ? "its plugin (" + view.plugin + ") gave no demand" : view.error};
  auto [it, fresh] = unqueued_.try_emplace(key, why);
  if (fresh || it->second != why) {
    it->second = std::move(why);
    unqueued_changed_.insert(key);
  }
}

const std::pair<std::string, std::string>* AdmissionStage::unqueued(const std::string& key) const {
  auto it = unqueued_.find(key);
  return it == unqueued_.end() ? nullptr : &it->second;
}

void AdmissionStage::emit_unqueued(const ClusterModel& model, DecisionSink& sink) {
  for (const auto& key : std::exchange(unqueued_changed_, {})) {
    auto it = unqueued_.find(key);
    const KubeObject* obj = model.object(key);
    if (it == unqueued_.end() || obj == nullptr) continue;
    admission::Explanation x;
    x.known = true;
    x.state = "Pending";
    x.reason = it->second.first;
    x.message = it->second.second;
    x.local_queue = obj->meta.namespace_ + "/" + obj->meta.labels.find(kQueueNameLabel)->second;
    x.position_in_cluster_queue = -1;
    x.position_in_local_queue = -1;
    sink.publish_status(*obj, x);
  }
}

void AdmissionStage::forget(const std::string& key, admission::Time now) {
  unqueued_.erase(key);
  unqueued_changed_.erase(key);
  first_seen_.erase(key);
  admitted_.erase(key);
  admit_requests_.erase(key);
  reissue_.erase(key);
  if (queued_.erase(key)) engine_->remove_workload(key, now);
}

void AdmissionStage::release(const std::string& key, admission::Time now) {
  if (queued_.erase(key)) engine_->remove_workload(key, now);
  admitted_.erase(key);
}

void AdmissionStage::requeue(admission::WorkloadInfo info, admission::Time now) {
  info.observed = admission::ObservedState::kWaiting;
  queued_.insert(info.key);
  engine_->upsert_workload(std::move(info), now);
}

std::optional<admission::WorkloadInfo> AdmissionStage::admitted_demand(const ClusterModel& model,
                                                                       const std::string& key,
                                                                       const KubeObject& obj) {
  const WorkloadView* v = model.view_of(key);
  if (!v) return std::nullopt;
  auto f = first_seen_.find(key);
  std::string error;
  auto info =
      workload_info(obj, *v, true, f == first_seen_.end() ? to_time(model.now()) : f->second,
                    engine_->resources(), &error);
  if (info) info->key = key;
  return info;
}

const admission::Time* AdmissionStage::first_seen(const std::string& key) const {
  auto it = first_seen_.find(key);
  return it == first_seen_.end() ? nullptr : &it->second;
}

void AdmissionStage::save_engine(base::ArchiveWriter& w) const { engine_->save_state(w); }

void AdmissionStage::load_engine(base::ArchiveReader& r,
                                 std::shared_ptr<const policy::PolicySet> set) {
  if (!r.ok()) return;
  engine_ = std::make_unique<admission::Scheduler>(std::move(set));
  engine_->load_state(r);
}

}  // namespace gpuaas::core
