#include "admission_output.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "admission_inputs.hpp"
#include "gpuaas/base/quantity.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

wire::EventTime to_event_time(admission::Time t) { return wire::EventTime(t.time_since_epoch()); }

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

// The plugin's first patch also carries the placement hint, as an annotation any scheduler
// plugin or the bridge can read.
void add_placement(v1::Action& a, const std::string& hint) {
  json body = a.body_json().empty() ? json::object() : json::parse(a.body_json(), nullptr, false);
  if (!body.is_object()) return;
  body["metadata"]["annotations"][kPlacementAnnotation] = hint;
  a.set_body_json(body.dump());
}

const char* action_name(WorkloadAction a) {
  switch (a) {
    case WorkloadAction::kAdmit:
      return "admit";
    case WorkloadAction::kSuspend:
      return "suspend";
    case WorkloadAction::kScaleToZero:
      return "scale to zero";
    case WorkloadAction::kScaleBack:
      return "scale back";
  }
  return "action";
}

json explanation(const admission::Explanation& x) {
  auto when = [](const std::optional<admission::Time>& t) -> json {
    return t ? json(wire::format_rfc3339(to_event_time(*t))) : json(nullptr);
  };
  return {{"state", x.state},
          {"reason", x.reason},
          {"message", x.message},
          {"held_by", x.holder},
          {"cluster_queue", x.cluster_queue},
          {"local_queue", x.local_queue},
          {"priority", x.priority},
          {"position",
           {{"cluster_queue",
             x.position_in_cluster_queue < 0 ? json(nullptr) : json(x.position_in_cluster_queue)},
            {"local_queue",
             x.position_in_local_queue < 0 ? json(nullptr) : json(x.position_in_local_queue)}}},
          {"estimated_start", when(x.estimated_start)},
          {"deadline", when(x.deadline)},
          {"deadline_at_risk", x.deadline_at_risk}};
}

}  // namespace

AdmissionController::Impl::Impl(bus::Subjects s, std::string src, telemetry::Registry* r)
    : subjects(std::move(s)),
      source(std::move(src)),
      scaler(r),
      queue_metrics(r),
      accounting(r),
      registry(r) {
  if (!registry) return;
  auto& reloads = telemetry::BuildCounter()
                      .Name("gpuaas_policy_reloads_total")
                      .Help("Policy sets offered to the admission engine, by result.")
                      .Register(*registry);
  reloads_applied = &reloads.Add({{"result", "applied"}});
  reloads_refused = &reloads.Add({{"result", "refused"}});
  bad_annotations = &telemetry::BuildCounter()
                         .Name("gpuaas_workload_annotation_errors_total")
                         .Help("gpuaas.io/deadline or expected-duration values that do not parse.")
                         .Register(*registry)
                         .Add({});
  action_errors = &telemetry::BuildCounter()
                       .Name("gpuaas_admission_action_errors_total")
                       .Help("Decisions whose plugin gave no patch (no plugin, or it failed).")
                       .Register(*registry)
                       .Add({});
  decisions = &telemetry::BuildCounter()
                   .Name("gpuaas_admission_decisions_total")
                   .Help("Admission decisions, by kind (admit, preempt) and the rule that fired.")
                   .Register(*registry);
  reclaim_actions = &telemetry::BuildCounter()
                         .Name("gpuaas_reclaim_actions_total")
                         .Help(
                             "Idle reclaim and notebook gating steps, by action (ScaleToZero, "
                             "Suspend, Stop, Wake, Release, Gate, MaxWaitExceeded) and rule.")
                         .Register(*registry);
  reclaim_workloads = &telemetry::BuildGauge()
                           .Name("gpuaas_reclaim_workloads")
                           .Help(
                               "Workloads idle reclaim watches, by phase (Active, AtZero with "
                               "quota reserved, Released, Waking).")
                           .Register(*registry);
}

std::string AdmissionController::Impl::next_id(std::string_view event_id) {
  return std::string(event_id) + "/" + std::to_string(output_seq++);
}

void AdmissionController::Impl::scale_pass(ClusterModel& model, std::string_view event_id) {
  const wire::EventTime now = model.now();
  std::set<std::string> waking;
  for (const auto& [key, st] : book.states())
    if (st.phase == ReclaimPhase::kWaking) waking.insert(key);
  auto out = scaler.pass(model, *scheduler, waking, now);
  for (auto& a : out.actions) {
    a.set_decision_id(next_id(event_id));
    a.set_cause_event_id(std::string(event_id));
    wire::set_time(*a.mutable_time(), now);
    if (a.target().kind() == "Node") upsert_node(model, a.target().name());  // cordon: at once
    queue_metrics.decision(a.rule());
    output.push_back(
        wire::encode_action(a, subjects.actions(a.target().namespace_(), a.target().kind())));
  }
  if (!out.evictions.empty()) emit(model, event_id, std::move(out.evictions));
}

bool AdmissionController::Impl::publish(ClusterModel& model, const KubeObject& obj,
                                        WorkloadAction action, const v1::ActionRequest& req,
                                        const std::string& rule, const std::string& hint,
                                        std::string_view event_id) {
  const wire::EventTime now = model.now();
  WorkloadInterpreter* in = model.interpreter();
  auto set = in ? in->act(obj, action, req)
                : Result<v1::ActionSet>(Status::not_found("no plugins are loaded"));
  if (!set) {
    spdlog::error("{} {}/{}: {} ({}) has no action: {}", obj.meta.kind, obj.meta.namespace_,
                  obj.meta.name, action_name(action), rule, set.status().message());
    if (action_errors) action_errors->Increment();
    return false;
  }
  if (set->actions_size() == 0) return false;  // the object already is as asked
  queue_metrics.decision(rule);
  bool first = true;
  for (auto& a : *set->mutable_actions()) {
    if (a.target().kind().empty()) {
      auto* t = a.mutable_target();
      t->set_api_version(obj.meta.api_version);
      t->set_kind(obj.meta.kind);
      t->set_namespace_(obj.meta.namespace_);
      t->set_name(obj.meta.name);
      t->set_uid(obj.meta.uid);
    }
    if (!hint.empty() && first && a.operation() == v1::Action::MERGE_PATCH) {
      add_placement(a, hint);
      first = false;
    }
    a.set_rule(rule);
    if (a.reason().empty()) a.set_reason(req.reason());
    a.set_decision_id(next_id(event_id));
    a.set_cause_event_id(std::string(event_id));
    wire::set_time(*a.mutable_time(), now);
    output.push_back(wire::encode_action(a, subjects.actions(obj.meta.namespace_, obj.meta.kind)));
  }
  return true;
}

void AdmissionController::Impl::publish_status(ClusterModel& model, const KubeObject& obj,
                                               const admission::Explanation& x,
                                               std::string_view event_id) {
  v1::Event ev = wire::make_event(next_id(event_id), source, model.now());
  ev.set_type("io.gpuaas.v1.queue.status");
  auto* st = ev.mutable_queue()->mutable_workload_status();
  auto* ref = st->mutable_workload();
  ref->set_api_version(obj.meta.api_version);
  ref->set_kind(obj.meta.kind);
  ref->set_namespace_(obj.meta.namespace_);
  ref->set_name(obj.meta.name);
  ref->set_uid(obj.meta.uid);
  st->set_state(x.state);
  st->set_reason(x.reason);
  st->set_message(x.message);
  st->set_cluster_queue(x.cluster_queue);
  st->set_local_queue(x.local_queue);
  st->set_position(x.position_in_cluster_queue);
  if (x.estimated_start)
    wire::set_time(*st->mutable_estimated_start(), to_event_time(*x.estimated_start));
  output.push_back(wire::encode_event(ev, subjects.status(obj.meta.namespace_, obj.meta.kind)));
}

void AdmissionController::Impl::emit(ClusterModel& model, std::string_view event_id,
                                     std::vector<admission::Decision> ds) {
  const wire::EventTime now = model.now();
  for (const auto& d : ds) {
    const KubeObject* obj = model.object(d.workload);
    if (!obj) continue;
    const bool admit = d.kind == admission::Decision::Kind::kAdmit;
    if (decisions)
      decisions->Add({{"kind", admit ? "admit" : "preempt"}, {"rule", d.rule}}).Increment();
    if (admit) {
      admitted.insert(d.workload);
      auto it = first_seen.find(d.workload);
      const double waited =
          it == first_seen.end()
              ? 0.0
              : std::chrono::duration<double>(now - to_event_time(it->second)).count();
      queue_metrics.admitted(d.cluster_queue, waited);
    } else {
      queue_metrics.evicted(d.cluster_queue, d.rule,
                            d.preemptor.empty() ? "" : scheduler->cluster_queue_of(d.preemptor));
      admitted.erase(d.workload);
    }
    v1::ActionRequest req;
    for (const auto& [k, v] : d.node_labels) (*req.mutable_node_labels())[k] = v;
    for (const auto& t : d.tolerations) req.add_tolerations_json(t.json());
    req.set_flavor(d.flavor);
    req.set_reason(d.reason);
    wire::set_time(*req.mutable_time(), now);
    std::vector<std::string> pod_sets;
    if (const auto* v = model.view_of(d.workload); v && v->demand)
      for (const auto& ps : v->demand->pod_sets()) pod_sets.push_back(ps.name());
    const std::string hint = admit ? placement_json(d, pod_sets).dump() : std::string();
    if (admit) {
      admit_requests[d.workload] = {req.SerializeAsString(), hint};
    } else {
      admit_requests.erase(d.workload);
      reissue.erase(d.workload);
    }
    // A workload queued again after idle reclaim released its quota comes back the way it left.
    const WorkloadAction action =
        admit ? admit_action(model, d.workload) : WorkloadAction::kSuspend;
    if (!publish(model, *obj, action, req, d.rule, hint, event_id) && !admit) {
      // Already stopped as far as the model knows (its admission not applied yet): no patch will
      // come back, so it counts as stopped now and queues again.
      spdlog::info("{} {}/{}: preempted while already stopped; queued again", obj->meta.kind,
                   obj->meta.namespace_, obj->meta.name);
      upsert_object(model, d.workload, *obj);
    }
  }
  // Queue status for dashboards: every workload whose reason changed.
  for (const auto& key : scheduler->take_status_changes()) {
    const KubeObject* obj = model.object(key);
    if (!obj) continue;
    const auto x =
        scheduler->explain(key, std::chrono::time_point_cast<std::chrono::milliseconds>(now));
    if (!x.known) continue;
    publish_status(model, *obj, x, event_id);
  }
}

// A conflict means the object changed after the daemon decided. The decision stands: an
// admitted workload keeps its reserved quota, a preempted one has given its quota away. So the
// same patch is computed again from the version the model now has, and published. Until a newer
// version has arrived it would conflict again, so it waits for one.
namespace {
bool reissues(const std::string& rule) {
  return rule.rfind("admission/", 0) == 0 || rule.rfind("preemption/", 0) == 0 ||
         rule == "reclaim/lend";
}
}  // namespace

void AdmissionController::Impl::reissue_pass(ClusterModel& model, std::string_view event_id) {
  for (auto it = reissue.begin(); it != reissue.end();) {
    const std::string& key = it->first;
    const auto& [rule, conflicted_rv] = it->second;
    const bool admission = rule.rfind("admission/", 0) == 0;
    const KubeObject* obj = model.object(key);
    auto req_it = admit_requests.find(key);
    // Gone, or the decision was overtaken (preempted after its admission, admitted again after
    // its preemption): nothing to redo.
    if (obj == nullptr || admitted.count(key) != (admission ? 1u : 0u) ||
        (admission && req_it == admit_requests.end())) {
      it = reissue.erase(it);
      continue;
    }
    if (obj->meta.resource_version == conflicted_rv) {
      ++it;
      continue;
    }
    spdlog::info("{} {}/{}: {} met a conflict at resourceVersion {}; patching again at {}",
                 obj->meta.kind, obj->meta.namespace_, obj->meta.name, rule, conflicted_rv,
                 obj->meta.resource_version);
    v1::ActionRequest req;
    if (admission) {
      req.ParseFromString(req_it->second.first);
      publish(model, *obj, admit_action(model, key), req, rule, req_it->second.second, event_id);
    } else {
      req.set_reason("preempted (" + rule + "); patched again after a conflict");
      wire::set_time(*req.mutable_time(), model.now());
      publish(model, *obj, WorkloadAction::kSuspend, req, rule, "", event_id);
    }
    it = reissue.erase(it);
  }
}

void AdmissionController::action_result(const v1::ActionResult& r) {
  auto& s = *impl_;
  if (r.outcome() != v1::ActionResult::CONFLICT || !reissues(r.rule())) return;
  ObjectMeta m;
  m.api_version = r.target().api_version();
  m.kind = r.target().kind();
  m.namespace_ = r.target().namespace_();
  m.name = r.target().name();
  const std::string key = ClusterModel::key_of(m);
  const bool admission = r.rule().rfind("admission/", 0) == 0;
  if (s.admitted.count(key) == (admission ? 1u : 0u) && s.queued.count(key))
    s.reissue[key] = {r.rule(), r.resource_version()};
}

std::string AdmissionController::explain_json(std::string_view request,
                                              const ClusterModel& model) const {
  const auto& s = *impl_;
  if (!s.scheduler)
    return json{{"error", "no policy is in force: admission is off (gpuaasd --policy FILE)"}}
        .dump();
  std::string key(request);
  if (std::count(key.begin(), key.end(), '/') < 3) {
    // "namespace/name": the queued workload of that name, whatever its kind.
    const auto slash = key.find('/');
    const std::string ns = slash == std::string::npos ? "" : key.substr(0, slash);
    const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
    std::string found;
    for (const auto& k : s.queued) {
      const KubeObject* o = model.object(k);
      if (o && o->meta.namespace_ == ns && o->meta.name == name) {
        found = k;
        break;
      }
    }
    for (const auto& [k, st] : s.book.states()) {
      const KubeObject* o = found.empty() ? model.object(k) : nullptr;
      if (o && o->meta.namespace_ == ns && o->meta.name == name) found = k;
    }
    if (found.empty())
      return json{{"error", "no queued workload " + std::string(request) +
                                " (it needs the kueue.x-k8s.io/queue-name label and a plugin "
                                "for its kind)"}}
          .dump();
    key = found;
  }
  auto x = s.scheduler->explain(
      key, std::chrono::time_point_cast<std::chrono::milliseconds>(model.now()));
  const std::string reclaim = s.reclaim_json(key, model);
  if (!x.known && reclaim.empty()) return json{{"error", "no queued workload " + key}}.dump();
  if (!x.known) {
    // Idle reclaim released its quota: it is out of the queue until asked for.
    x.state = "ScaledToZero";
    x.reason = "QuotaReleased";
    x.message = "at zero; its quota reservation ended: a request or a start queues it again";
  }
  if (s.max_wait_reported.count(key) && x.state == "Pending") {
    x.reason = "MaxWaitExceeded";
    x.message = "waited longer than its NotebookPolicy's maxWait: " + x.message;
  }
  json j = explanation(x);
  j["quota_reserved_idle"] = x.quota_reserved_idle;
  j["quota_lent"] = x.quota_lent;
  if (!reclaim.empty()) j["reclaim"] = json::parse(reclaim);
  if (const KubeObject* o = model.object(key)) {
    j["workload"] = {{"kind", o->meta.kind},
                     {"namespace", o->meta.namespace_},
                     {"name", o->meta.name},
                     {"key", key}};
  }
  return j.dump();
}

std::string AdmissionController::pools_json(const ClusterModel& model) const {
  return impl_->scaler.json(model.now());
}

std::string AdmissionController::queues_json(const ClusterModel&) const {
  json out = json::array();
  if (!impl_->scheduler) return out.dump();
  for (const auto& q : impl_->scheduler->cluster_queue_usage()) {
    json res = json::array();
    for (const auto& r : q.resources)
      res.push_back({{"flavor", r.flavor},
                     {"resource", r.resource},
                     {"nominal", format_milli(r.nominal_milli)},
                     {"usage", format_milli(r.usage_milli)}});
    out.push_back({{"name", q.name},
                   {"cohort", q.cohort},
                   {"pending", q.pending},
                   {"admitted", q.admitted},
                   {"resources", std::move(res)}});
  }
  return out.dump();
}

void AdmissionController::refresh_metrics(const ClusterModel& model) const {
  if (!impl_->scheduler) return;
  impl_->queue_metrics.refresh(*impl_->scheduler);
  impl_->accounting.export_metrics(model.now());
}

std::string AdmissionController::report_json(const ClusterModel& model,
                                             std::optional<std::chrono::seconds> since) const {
  return impl_->accounting.report_json(model.now(), since);
}

}  // namespace gpuaas::core
