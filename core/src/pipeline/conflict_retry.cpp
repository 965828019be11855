#include "pipeline/conflict_retry.hpp"

#include <spdlog/spdlog.h>

#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/decision_sink.hpp"

namespace gpuaas::core {

ConflictRetry::ConflictRetry(telemetry::Registry* registry) {
  if (!registry) return;
  auto& f = telemetry::BuildCounter()
                .Name("gpuaas_conflicts_redone_total")
                .Help(
                    "Decisions other than admission's that met a 409, by result: sent again "
                    "from the newer object (redone) or given up after repeated conflicts.")
                .Register(*registry);
  redone_ = &f.Add({{"result", "redone"}});
  given_up_ = &f.Add({{"result", "given_up"}});
}

void ConflictRetry::keep(const std::string& id, std::shared_ptr<Sent> s) {
  if (sent_.size() >= kMaxKept && !order_.empty()) {
    sent_.erase(order_.begin()->second);
    order_.erase(order_.begin());
  }
  const uint64_t n = ++seq_;
  if (auto [it, fresh] = sent_.try_emplace(id, n, s); !fresh) {
    order_.erase(it->second.first);
    it->second = {n, std::move(s)};
  }
  order_[n] = id;
}

void ConflictRetry::sent_patch(const std::vector<std::string>& ids, const KubeObject& obj,
                               WorkloadAction action, const v1::ActionRequest& req,
                               const std::string& rule, const std::string& hint) {
  auto s = std::make_shared<Sent>();
  s->key = ClusterModel::key_of(obj.meta);
  s->resource_version = obj.meta.resource_version;
  s->action = action;
  s->request = req.SerializeAsString();
  s->rule = rule;
  s->hint = hint;
  s->attempts = std::exchange(carry_attempts_, 1);
  for (const auto& id : ids) keep(id, s);
}

void ConflictRetry::sent_whole(const v1::Action& action) {
  auto s = std::make_shared<Sent>();
  s->whole = action;
  s->rule = action.rule();
  s->attempts = std::exchange(carry_attempts_, 1);
  keep(action.decision_id(), std::move(s));
}

void ConflictRetry::result(const v1::ActionResult& r, bool handled) {
  auto it = sent_.find(r.decision_id());
  if (it == sent_.end()) return;
  std::shared_ptr<Sent> s = it->second.second;
  order_.erase(it->second.first);
  sent_.erase(it);
  if (r.outcome() != v1::ActionResult::CONFLICT || handled) return;
  if (s->attempts >= kMaxAttempts) {
    spdlog::warn("{} {}: {} met a conflict {} times; given up", r.target().kind(),
                 r.target().name(), s->rule, s->attempts);
    if (given_up_) given_up_->Increment();
    return;
  }
  s->conflicted_rv = r.resource_version().empty() ? s->resource_version : r.resource_version();
  pending_[s->key.empty() ? r.decision_id() : s->key] = std::move(s);
}

void ConflictRetry::pass(const ClusterModel& model, DecisionSink& sink) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Sent& s = *it->second;
    if (s.key.empty()) {
      // A stage's own action (node scaling, a drain): it carries no version to recompute from.
      v1::Action again = s.whole;
      again.clear_decision_id();
      carry_attempts_ = s.attempts + 1;
      sink.publish(std::move(again));
      carry_attempts_ = 1;
      if (redone_) redone_->Increment();
      it = pending_.erase(it);
      continue;
    }
    const KubeObject* obj = model.object(s.key);
    if (obj == nullptr) {  // gone: nothing to redo
      it = pending_.erase(it);
      continue;
    }
    if (obj->meta.resource_version == s.conflicted_rv) {  // the newer version has not come yet
      ++it;
      continue;
    }
    spdlog::info("{} {}/{}: {} met a conflict at resourceVersion {}; patching again at {}",
                 obj->meta.kind, obj->meta.namespace_, obj->meta.name, s.rule, s.conflicted_rv,
                 obj->meta.resource_version);
    v1::ActionRequest req;
    req.ParseFromString(s.request);
    wire::set_time(*req.mutable_time(), model.now());
    carry_attempts_ = s.attempts + 1;
    sink.publish(*obj, s.action, req, s.rule, s.hint);
    carry_attempts_ = 1;
    if (redone_) redone_->Increment();
    it = pending_.erase(it);
  }
}

}  // namespace gpuaas::core
