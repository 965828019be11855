// Idle reclaim's steps on one workload: to zero with its quota reserved (or released at once),
// the reservation's end, and the wake that brings it back.
#include <spdlog/spdlog.h>

#include "admission/stage/admission_inputs.hpp"
#include "admission/stage/admission_stage.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/decision_sink.hpp"
#include "reclaim/reclaim_stage.hpp"

namespace gpuaas::core {

namespace {

// Woken: the idle clock starts over once its pods run again (start-up is not idleness).
void woke(ReclaimState& st, const ClusterModel& model, const KubeObject& obj) {
  st.phase = ReclaimPhase::kActive;
  st.woken_at = model.now();
  st.running_since = model.now();
  st.last_activity = model.now();
  st.waking_from_pods = running_pods(model.pods_of(obj.meta));
  if (st.arrivals) st.arrivals->restart();
}

}  // namespace

void ReclaimStage::reclaim(const ClusterModel& model, const std::string& key, const KubeObject& obj,
                           ReclaimState& st, ReclaimRule& rule, const std::string& why,
                           AdmissionStage& admission, DecisionSink& sink) {
  const wire::EventTime now = model.now();
  const auto& p = rule.spec;
  WorkloadAction action = p.action == policy::IdleAction::kScaleToZero
                              ? WorkloadAction::kScaleToZero
                              : WorkloadAction::kSuspend;
  if (action == WorkloadAction::kScaleToZero && interpreter_ &&
      !interpreter_->can(obj, kPluginCapScaleToZero)) {
    action = WorkloadAction::kSuspend;  // the kind cannot scale: suspending frees the GPUs too
  }
  // What it was admitted with, to queue it again if its reservation ends before it wakes.
  if (model.view_of(key)) st.demand = admission.admitted_demand(model, key, obj);
  v1::ActionRequest req;
  req.set_reason(why);
  wire::set_time(*req.mutable_time(), now);
  if (!sink.publish(obj, action, req, "reclaim/idle", "")) return;
  st.phase = ReclaimPhase::kAtZero;
  st.at_zero_since = now;
  st.action = p.action;
  st.reason = why;
  st.saw_suspended = false;
  const bool release_now = p.action == policy::IdleAction::kStop || p.keep_quota_for.count() == 0;
  st.reserved_until = now + p.keep_quota_for;
  st.lent = p.lend_idle_quota && !release_now;
  if (actions_)
    actions_->Add({{"action", std::string(to_string(p.action))}, {"rule", rule.id}}).Increment();
  spdlog::info("{} {}/{}: {} ({}: {})", obj.meta.kind, obj.meta.namespace_, obj.meta.name,
               to_string(p.action), rule.id, why);
  if (release_now || !admission.engine().park(key, st.lent, to_time(now)))
    release_reservation(model, key, obj, st, admission, sink);
}

void ReclaimStage::release_reservation(const ClusterModel& model, const std::string& key,
                                       const KubeObject& obj, ReclaimState& st,
                                       AdmissionStage& admission, DecisionSink& sink) {
  admission.release(key, to_time(model.now()));
  st.phase = ReclaimPhase::kReleased;
  st.lent = false;
  if (actions_) actions_->Add({{"action", "Release"}, {"rule", st.rule}}).Increment();
  admission::Explanation x;
  x.known = true;
  x.state = "ScaledToZero";
  x.reason = "QuotaReleased";
  x.message = "at zero since " + wire::format_rfc3339(st.at_zero_since) +
              "; its quota reservation ended: waking queues it again";
  sink.publish_status(obj, x);
}

void ReclaimStage::wake(const ClusterModel& model, const std::string& key, const KubeObject& obj,
                        ReclaimState& st, const std::string& why, AdmissionStage& admission,
                        DecisionSink& sink, std::vector<admission::Decision>& out) {
  const wire::EventTime now = model.now();
  if (actions_) actions_->Add({{"action", "Wake"}, {"rule", st.rule}}).Increment();
  spdlog::info("{} {}/{}: wakes ({})", obj.meta.kind, obj.meta.namespace_, obj.meta.name, why);
  if (st.phase == ReclaimPhase::kAtZero) {
    // The reservation is still held: back at once, unless what ran on its lent quota must
    // stop first; then admission gives it back (rule reclaim/wake, admit_action).
    auto preempt = admission.engine().unpark(key, to_time(now));
    out.insert(out.end(), preempt.begin(), preempt.end());
    if (admission.engine().waking(key)) {
      st.phase = ReclaimPhase::kTakingBack;
      st.reason = why;
      return;
    }
    v1::ActionRequest req;
    req.set_reason(why);
    wire::set_time(*req.mutable_time(), now);
    const WorkloadAction back = st.action == policy::IdleAction::kScaleToZero
                                    ? WorkloadAction::kScaleBack
                                    : WorkloadAction::kAdmit;
    WorkloadAction action = back;
    if (back == WorkloadAction::kScaleBack && interpreter_ &&
        !interpreter_->can(obj, kPluginCapScaleToZero))
      action = WorkloadAction::kAdmit;  // it was suspended instead
    sink.publish(obj, action, req, "reclaim/wake", "");
    woke(st, model, obj);
    return;
  }
  // Released: it queues again with what it was admitted with; admission brings it back.
  st.phase = ReclaimPhase::kWaking;
  st.reason = why;
  if (!st.demand) return;
  admission.requeue(*st.demand, to_time(now));
}

WorkloadAction ReclaimStage::admit_action(const ClusterModel& model, const std::string& key) {
  ReclaimState* st = book_.find(key);
  if (!st || (st->phase != ReclaimPhase::kWaking && st->phase != ReclaimPhase::kTakingBack)) {
    gated_.erase(key);
    return WorkloadAction::kAdmit;
  }
  const KubeObject* obj = model.object(key);
  if (obj) woke(*st, model, *obj);
  if (st->action == policy::IdleAction::kScaleToZero && obj && interpreter_ &&
      interpreter_->can(*obj, kPluginCapScaleToZero))
    return WorkloadAction::kScaleBack;
  return WorkloadAction::kAdmit;
}

}  // namespace gpuaas::core
