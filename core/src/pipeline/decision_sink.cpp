#include "pipeline/decision_sink.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "admission/stage/admission_inputs.hpp"
#include "admission/stage/queue_metrics.hpp"
#include "binding/binding_stage.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/conflict_retry.hpp"

namespace gpuaas::core {

namespace {

using nlohmann::json;

// The placement hint rides on the plugin's first patch, as an annotation any scheduler plugin
// or the bridge can read.
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
    case WorkloadAction::kSetScale:
      return "set scale bounds";
  }
  return "action";
}

}  // namespace

DecisionSink::DecisionSink(bus::Subjects subjects, std::string source,
                           telemetry::Registry* registry, WorkloadInterpreter* interpreter,
                           QueueMetrics& queue_metrics)
    : subjects_(std::move(subjects)),
      source_(std::move(source)),
      interpreter_(interpreter),
      queue_metrics_(queue_metrics) {
  if (!registry) return;
  action_errors_ = &telemetry::BuildCounter()
                        .Name("gpuaas_admission_action_errors_total")
                        .Help("Decisions whose plugin gave no patch (no plugin, or it failed).")
                        .Register(*registry)
                        .Add({});
}

void DecisionSink::begin(std::string_view event_id, wire::EventTime now,
                         const ClusterModel* model) {
  model_ = model;
  event_id_ = std::string(event_id);
  now_ = now;
  seq_ = 0;
}

std::string DecisionSink::next_id() { return event_id_ + "/" + std::to_string(seq_++); }

void DecisionSink::stamp(v1::Action& a) {
  a.set_decision_id(next_id());
  a.set_cause_event_id(event_id_);
  wire::set_time(*a.mutable_time(), now_);
  if (epoch_ > 0) a.set_epoch(epoch_);
}

std::vector<Outbound> DecisionSink::take() { return std::exchange(output_, {}); }

bool DecisionSink::publish(const KubeObject& obj, WorkloadAction action,
                           const v1::ActionRequest& req, const std::string& rule,
                           const std::string& hint) {
  const std::string workload = ClusterModel::key_of(obj.meta);
  if (!obj.members.empty()) {
    bool any = false;
    for (const auto& key : obj.members) {
      if (const KubeObject* m = model_ ? model_->object(key) : nullptr)
        any = publish_one(*m, workload, action, req, rule, hint) || any;
    }
    return any;
  }
  return publish_one(obj, workload, action, req, rule, hint);
}

bool DecisionSink::publish_one(const KubeObject& obj, const std::string& workload,
                               WorkloadAction action, const v1::ActionRequest& req,
                               const std::string& rule, const std::string& hint) {
  std::optional<nlohmann::json> narrowing;
  if (binding_ && model_ && action == WorkloadAction::kAdmit && obj.meta.kind == "Pod" &&
      obj.meta.api_version == "v1") {
    narrowing = binding_->admit_narrowing(*model_, obj, workload);
    if (!narrowing) return false;  // it requires another host: it stays gated (explain)
  }
  auto set = interpreter_ ? interpreter_->act(obj, action, req)
                          : Result<v1::ActionSet>(Status::not_found("no plugins are loaded"));
  if (!set) {
    spdlog::error("{} {}/{}: {} ({}) has no action: {}", obj.meta.kind, obj.meta.namespace_,
                  obj.meta.name, action_name(action), rule, set.status().message());
    if (action_errors_) action_errors_->Increment();
    return false;
  }
  if (set->actions_size() == 0) return false;  // the object already is as asked
  queue_metrics_.decision(rule);
  bool first = true;
  std::vector<std::string> ids;
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
      if (narrowing && !narrowing->empty()) {
        auto body = nlohmann::json::parse(a.body_json(), nullptr, false);
        if (body.is_object()) {
          body.merge_patch(*narrowing);
          a.set_body_json(body.dump());
        }
      }
      first = false;
    }
    a.set_rule(rule);
    if (a.reason().empty()) a.set_reason(req.reason());
    stamp(a);
    ids.push_back(a.decision_id());
    output_.push_back(
        {wire::encode_action(a, subjects_.actions(obj.meta.namespace_, obj.meta.kind)), true});
  }
  if (retry_) retry_->sent_patch(ids, obj, action, req, rule, hint);
  return true;
}

void DecisionSink::publish(v1::Action a) {
  stamp(a);
  if (retry_) retry_->sent_whole(a);
  queue_metrics_.decision(a.rule());
  output_.push_back(
      {wire::encode_action(a, subjects_.actions(a.target().namespace_(), a.target().kind())),
       true});
}

void DecisionSink::publish_status(const KubeObject& obj, const admission::Explanation& x) {
  if (!obj.members.empty()) {
    for (const auto& key : obj.members) {
      if (const KubeObject* m = model_ ? model_->object(key) : nullptr) publish_status(*m, x);
    }
    return;
  }
  v1::Event ev = wire::make_event(next_id(), source_, now_);
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
  output_.push_back(
      {wire::encode_event(ev, subjects_.status(obj.meta.namespace_, obj.meta.kind)), false});
}

}  // namespace gpuaas::core
