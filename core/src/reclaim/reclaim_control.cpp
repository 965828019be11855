// Idle reclaim in the daemon: watches the workloads an IdleReclaimPolicy (or a NotebookPolicy's
// culling) selects, scales idle ones to zero through their plugin while the admission ledger
// keeps their quota reserved (Scheduler::park), releases the reservation after keepQuotaFor, and
// wakes them when asked for: a request, a task, a user starting a stopped notebook. Notebooks a
// NotebookPolicy gates are held until admitted. Every step is an action or a status event with
// its rule and reason; time is event time.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "../admission_inputs.hpp"
#include "../admission_output.hpp"
#include "activity_reader.hpp"
#include "gpuaas/core/workload_plugin.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Decisions are taken at the first event at least this long after the previous look.
constexpr seconds kReclaimInterval{5};

admission::Time to_time(wire::EventTime t) {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(t);
}

std::string when(wire::EventTime t) { return wire::format_rfc3339(t); }

std::string secs(milliseconds d) { return policy::format_duration(duration_cast<seconds>(d)); }

bool suspended(const WorkloadView* v) {
  return v && v->lifecycle && v->lifecycle->state() == v1::WorkloadLifecycle::SUSPENDED;
}
bool running(const WorkloadView* v) {
  return v && v->lifecycle && v->lifecycle->state() == v1::WorkloadLifecycle::RUNNING;
}
bool ended(const WorkloadView* v) {
  return v && v->lifecycle &&
         (v->lifecycle->state() == v1::WorkloadLifecycle::SUCCEEDED ||
          v->lifecycle->state() == v1::WorkloadLifecycle::FAILED);
}

bool opted_out(const KubeObject& obj, const policy::IdleReclaimPolicy& p) {
  auto it = obj.meta.annotations.find(p.opt_out_annotation);
  return it != obj.meta.annotations.end() && it->second == p.opt_out_value;
}

// The wait before zero: learned per workload, or the policy's window and grace (Knative: the
// stable window, then the scale-to-zero grace period).
milliseconds timeout_of(const ReclaimState& st, const ReclaimRule& rule) {
  if (rule.spec.learn_arrivals && st.timeout_in_force.count() > 0) return st.timeout_in_force;
  return std::max(rule.spec.idle_window, rule.spec.stabilization_window) + rule.spec.grace_period;
}

std::string cluster_queue_of(const policy::PolicySet& set, const KubeObject& obj,
                             const WorkloadView* v) {
  if (!v || !v->demand) return {};
  const auto* lq = set.local_queue(obj.meta.namespace_, v->demand->queue_name());
  return lq ? lq->cluster_queue : std::string();
}

// learnArrivals: every new time its plugin saw use (a request) is an arrival; its gap teaches
// the timeout and the policy's cold-start budget. A cold start weighs the requests that arrive
// while the service wakes (its last wake's latency over its median gap).
void learn_arrival(ReclaimState& st, ReclaimRule& rule, const ActivityVerdict& a) {
  if (!st.arrivals || !rule.budget || !a.asked_at) return;
  if (st.last_arrival && *a.asked_at <= *st.last_arrival) return;
  st.last_arrival = *a.asked_at;
  const auto median = st.arrivals->median_gap();
  const double weight =
      1.0 + (median && median->count() > 0 ? static_cast<double>(st.wake_latency.count()) /
                                                 static_cast<double>(median->count())
                                           : 0.0);
  if (auto gap = st.arrivals->observe(to_time(*a.asked_at)))
    rule.budget->record_gap(*gap, timeout_of(st, rule), weight);
  st.timeout_in_force = st.arrivals->timeout(rule.budget->lambda_seconds(), weight);
}

int running_pods(const std::vector<const KubeObject*>& pods) {
  int n = 0;
  for (const KubeObject* p : pods)
    if (p->pod && p->pod->phase == "Running") ++n;
  return n;
}

// Pods by the workload their controller chain leads to: one walk over the pods per pass
// instead of one per watched workload.
std::unordered_map<std::string, std::vector<const KubeObject*>> pods_by_workload(
    const ClusterModel& model) {
  std::unordered_map<std::string, std::vector<const KubeObject*>> out;
  for (const auto& [key, pod] : model.pods())
    if (std::string w = model.workload_of(pod); !w.empty()) out[w].push_back(&pod);
  return out;
}

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

void AdmissionController::Impl::reclaim(ClusterModel& model, const std::string& key,
                                        const KubeObject& obj, ReclaimState& st, ReclaimRule& rule,
                                        const std::string& why, std::string_view event_id) {
  const wire::EventTime now = model.now();
  const auto& p = rule.spec;
  WorkloadInterpreter* in = model.interpreter();
  WorkloadAction action = p.action == policy::IdleAction::kScaleToZero
                              ? WorkloadAction::kScaleToZero
                              : WorkloadAction::kSuspend;
  if (action == WorkloadAction::kScaleToZero && in && !in->can(obj, kPluginCapScaleToZero)) {
    action = WorkloadAction::kSuspend;  // the kind cannot scale: suspending frees the GPUs too
  }
  // What it was admitted with, to queue it again if its reservation ends before it wakes.
  std::string error;
  if (const WorkloadView* v = model.view_of(key)) {
    auto f = first_seen.find(key);
    st.demand = workload_info(obj, *v, true, f == first_seen.end() ? to_time(now) : f->second,
                              scheduler->resources(), &error);
    if (st.demand) st.demand->key = key;
  }
  v1::ActionRequest req;
  req.set_reason(why);
  wire::set_time(*req.mutable_time(), now);
  if (!publish(model, obj, action, req, "reclaim/idle", "", event_id)) return;
  st.phase = ReclaimPhase::kAtZero;
  st.at_zero_since = now;
  st.action = p.action;
  st.reason = why;
  st.saw_suspended = false;
  const bool release_now = p.action == policy::IdleAction::kStop || p.keep_quota_for.count() == 0;
  st.reserved_until = now + p.keep_quota_for;
  st.lent = p.lend_idle_quota && !release_now;
  if (reclaim_actions)
    reclaim_actions->Add({{"action", std::string(to_string(p.action))}, {"rule", rule.id}})
        .Increment();
  spdlog::info("{} {}/{}: {} ({}: {})", obj.meta.kind, obj.meta.namespace_, obj.meta.name,
               to_string(p.action), rule.id, why);
  if (release_now || !scheduler->park(key, st.lent, to_time(now))) {
    release_reservation(model, key, obj, st, event_id);
  }
}

void AdmissionController::Impl::release_reservation(ClusterModel& model, const std::string& key,
                                                    const KubeObject& obj, ReclaimState& st,
                                                    std::string_view event_id) {
  if (queued.erase(key)) scheduler->remove_workload(key, to_time(model.now()));
  admitted.erase(key);
  st.phase = ReclaimPhase::kReleased;
  st.lent = false;
  if (reclaim_actions) reclaim_actions->Add({{"action", "Release"}, {"rule", st.rule}}).Increment();
  admission::Explanation x;
  x.known = true;
  x.state = "ScaledToZero";
  x.reason = "QuotaReleased";
  x.message = "at zero since " + when(st.at_zero_since) +
              "; its quota reservation ended: waking queues it again";
  publish_status(model, obj, x, event_id);
}

void AdmissionController::Impl::wake(ClusterModel& model, const std::string& key,
                                     const KubeObject& obj, ReclaimState& st,
                                     const std::string& why, std::string_view event_id,
                                     std::vector<admission::Decision>& out) {
  const wire::EventTime now = model.now();
  if (reclaim_actions) reclaim_actions->Add({{"action", "Wake"}, {"rule", st.rule}}).Increment();
  spdlog::info("{} {}/{}: wakes ({})", obj.meta.kind, obj.meta.namespace_, obj.meta.name, why);
  if (st.phase == ReclaimPhase::kAtZero) {
    // The reservation is still held: back at once; what ran on its lent quota makes room.
    auto preempt = scheduler->unpark(key, to_time(now));
    out.insert(out.end(), preempt.begin(), preempt.end());
    v1::ActionRequest req;
    req.set_reason(why);
    wire::set_time(*req.mutable_time(), now);
    const WorkloadAction back = st.action == policy::IdleAction::kScaleToZero
                                    ? WorkloadAction::kScaleBack
                                    : WorkloadAction::kAdmit;
    WorkloadAction action = back;
    if (back == WorkloadAction::kScaleBack && model.interpreter() &&
        !model.interpreter()->can(obj, kPluginCapScaleToZero))
      action = WorkloadAction::kAdmit;  // it was suspended instead
    publish(model, obj, action, req, "reclaim/wake", "", event_id);
    woke(st, model, obj);
    return;
  }
  // Released: it queues again with what it was admitted with; admission brings it back.
  st.phase = ReclaimPhase::kWaking;
  st.reason = why;
  if (!st.demand) return;
  admission::WorkloadInfo info = *st.demand;
  info.observed = admission::ObservedState::kWaiting;
  queued.insert(key);
  scheduler->upsert_workload(std::move(info), to_time(now));
}

WorkloadAction AdmissionController::Impl::admit_action(ClusterModel& model,
                                                       const std::string& key) {
  ReclaimState* st = book.find(key);
  if (!st || st->phase != ReclaimPhase::kWaking) {
    gated.erase(key);
    return WorkloadAction::kAdmit;
  }
  const KubeObject* obj = model.object(key);
  if (obj) woke(*st, model, *obj);
  if (st->action == policy::IdleAction::kScaleToZero && obj && model.interpreter() &&
      model.interpreter()->can(*obj, kPluginCapScaleToZero))
    return WorkloadAction::kScaleBack;
  return WorkloadAction::kAdmit;
}

void AdmissionController::Impl::held_out_changed(ClusterModel& model, const std::string& key,
                                                 const KubeObject& obj,
                                                 std::vector<admission::Decision>& out) {
  ReclaimState* st = book.find(key);
  if (!st) return;
  const WorkloadView* v = model.view_of(key);
  if (suspended(v)) {
    st->saw_suspended = true;
  } else if (st->saw_suspended && st->phase != ReclaimPhase::kActive &&
             st->phase != ReclaimPhase::kWaking) {
    // Someone started it (a user in the notebook UI): it wakes as asked for.
    wake(model, key, obj, *st, "started by its user", current_event, out);
  }
}

void AdmissionController::Impl::reclaim_pass(ClusterModel& model, std::string_view event_id,
                                             std::vector<admission::Decision>& out) {
  if (const auto& hook = ReclaimBook::pass_hook()) hook(book, scheduler->policy());
  const wire::EventTime now = model.now();
  const uint64_t samples = model.stats().samples_recorded;
  const bool new_samples = samples != samples_seen;
  samples_seen = samples;
  const bool full = now >= next_reclaim;
  if (!full && !new_samples) return;
  if (full) next_reclaim = now + kReclaimInterval;
  const policy::PolicySet& set = scheduler->policy();

  // Start watching what runs admitted (by us, or adopted running); forget what ended or is gone.
  if (full) {
    for (const auto& key : queued) {
      if (book.find(key)) continue;
      const KubeObject* obj = model.object(key);
      const WorkloadView* v = model.view_of(key);
      if (!obj || !running(v) || !scheduler->running(key)) continue;
      ReclaimRule* rule = book.match(*obj, cluster_queue_of(set, *obj, v));
      if (!rule) continue;
      ReclaimState st;
      st.rule = rule->id;
      st.running_since = now;
      st.last_activity = now;
      if (rule->spec.learn_arrivals)
        st.arrivals = std::make_unique<reclaim::ArrivalModel>(arrival_settings());
      book.states().emplace(key, std::move(st));
    }
  }
  std::vector<std::string> gone;
  // Built at the first workload that needs it: a pass for new samples often needs none.
  std::optional<std::unordered_map<std::string, std::vector<const KubeObject*>>> pods;
  static const std::vector<const KubeObject*> kNoPods;
  for (auto& [key, st] : book.states()) {
    const KubeObject* obj = model.object(key);
    const WorkloadView* v = model.view_of(key);
    ReclaimRule* rule = book.rule(st.rule);
    if (!obj || ended(v) || !rule) {
      // A reload that drops its rule ends a reservation it held (nothing would end it later).
      if (obj && st.phase == ReclaimPhase::kAtZero)
        release_reservation(model, key, *obj, st, event_id);
      gone.push_back(key);
      continue;
    }
    if (st.phase == ReclaimPhase::kWaking) continue;  // admission has it
    const bool at_zero = st.phase != ReclaimPhase::kActive;
    if (!full && !at_zero) continue;
    if (!pods) pods = pods_by_workload(model);
    const auto found = pods->find(key);
    const auto& own_pods = found == pods->end() ? kNoPods : found->second;
    const auto& p = rule->spec;
    if (at_zero) {
      if (st.phase == ReclaimPhase::kAtZero && now >= st.reserved_until) {
        release_reservation(model, key, *obj, st, event_id);
      }
      if (now < st.at_zero_since + p.min_time_at_zero) continue;
      // Asked for while at zero: a request, a task waiting, kernels in use.
      const ActivityVerdict a = read_activity(model, *obj, own_pods, p, st.at_zero_since, true);
      if (a.level == ActivityVerdict::Level::kActive && a.last_active &&
          *a.last_active > st.at_zero_since) {
        learn_arrival(st, *rule, a);  // the gap that ends at zero was a cold start
        wake(model, key, *obj, st, "asked for while at zero: " + a.evidence, event_id, out);
      }
      continue;
    }
    if (st.waking_from_pods >= 0 && running_pods(own_pods) > st.waking_from_pods) {
      st.waking_from_pods = -1;
      if (st.woken_at) st.wake_latency = duration_cast<milliseconds>(now - *st.woken_at);
    }
    if (!scheduler->running(key) || !running(v) || st.waking_from_pods >= 0) {
      st.running_since = now;  // starting, restarting or waking: not idle yet
      st.last_activity = now;
      continue;
    }
    const wire::EventTime fresh = now - std::max(p.idle_window, seconds(60));
    const ActivityVerdict a = read_activity(model, *obj, own_pods, p, fresh,
                                            p.requests_are_activity || p.kernel_activity);
    st.evidence = a.evidence;
    switch (a.level) {
      case ActivityVerdict::Level::kActive:
        if (a.last_active && *a.last_active > st.last_activity) st.last_activity = *a.last_active;
        break;
      case ActivityVerdict::Level::kUnknown:
        if (p.missing_data == policy::MissingData::kNotIdle) st.last_activity = now;
        break;
      case ActivityVerdict::Level::kIdle:
        if (a.last_active && *a.last_active > st.last_activity) st.last_activity = *a.last_active;
        break;
    }
    learn_arrival(st, *rule, a);
    if (opted_out(*obj, p)) continue;
    if (now - st.running_since < p.min_runtime) continue;
    if (st.woken_at && now - *st.woken_at < p.cooldown) continue;
    const milliseconds timeout = timeout_of(st, *rule);
    const auto idle_for = now - st.last_activity;
    if (idle_for < timeout) continue;
    std::string learned;
    if (rule->budget && st.timeout_in_force.count() > 0) {
      learned = " learned; cold starts so far " + std::to_string(rule->budget->cold_starts()) +
                " against Knative's " + std::to_string(rule->budget->reference_cold_starts()) +
                ", lambda " + std::to_string(static_cast<int>(rule->budget->lambda_seconds())) +
                "s";
    }
    reclaim(model, key, *obj, st, *rule,
            "idle for " + secs(duration_cast<milliseconds>(idle_for)) + " (timeout " +
                secs(timeout) + learned + ", " + rule->id + "): " + a.evidence,
            event_id);
  }
  for (const auto& key : gone) book.states().erase(key);
  if (reclaim_workloads && full) {
    int counts[4] = {0, 0, 0, 0};
    for (const auto& [k, st] : book.states()) ++counts[static_cast<int>(st.phase)];
    for (auto ph : {ReclaimPhase::kActive, ReclaimPhase::kAtZero, ReclaimPhase::kReleased,
                    ReclaimPhase::kWaking})
      reclaim_workloads->Add({{"phase", to_string(ph)}}).Set(counts[static_cast<int>(ph)]);
  }
}

void AdmissionController::Impl::gate_pass(ClusterModel& model, std::string_view event_id) {
  const wire::EventTime now = model.now();
  for (const auto& key : std::exchange(gate_candidates, {})) {
    const KubeObject* obj = model.object(key);
    const WorkloadView* v = model.view_of(key);
    if (!obj || !v || admitted.count(key) || suspended(v) || book.holds_out(key)) continue;
    if (!book.gate_of(*obj) || !queued.count(key)) continue;
    v1::ActionRequest req;
    req.set_reason("held until admitted (NotebookPolicy gate)");
    wire::set_time(*req.mutable_time(), now);
    if (publish(model, *obj, WorkloadAction::kSuspend, req, "notebook/gate", "", event_id)) {
      gated.insert(key);
      if (reclaim_actions)
        reclaim_actions->Add({{"action", "Gate"}, {"rule", "NotebookPolicy"}}).Increment();
    }
  }
  // maxWait: a notebook that waits longer is reported once (log, metric, status event).
  for (const auto& key : queued) {
    const KubeObject* obj = model.object(key);
    if (!obj || admitted.count(key) || max_wait_reported.count(key)) continue;
    const policy::NotebookPolicy* nb = book.gate_of(*obj);
    if (!nb || nb->max_wait.count() == 0) continue;
    auto f = first_seen.find(key);
    if (f == first_seen.end() || to_time(now) - f->second < nb->max_wait) continue;
    max_wait_reported.insert(key);
    auto x = scheduler->explain(key, to_time(now));
    if (!x.known || x.state != "Pending") continue;
    x.reason = "MaxWaitExceeded";
    x.message = "waited longer than maxWait " + policy::format_duration(nb->max_wait) +
                " (NotebookPolicy " + nb->name + "): " + x.message;
    spdlog::warn("Notebook {}/{}: {}", obj->meta.namespace_, obj->meta.name, x.message);
    if (reclaim_actions)
      reclaim_actions->Add({{"action", "MaxWaitExceeded"}, {"rule", "NotebookPolicy/" + nb->name}})
          .Increment();
    publish_status(model, *obj, x, event_id);
  }
}

std::string AdmissionController::Impl::reclaim_json(const std::string& key,
                                                    const ClusterModel& model) const {
  const ReclaimState* st = book.find(key);
  if (!st) return {};
  json j = {{"state", to_string(st->phase)}, {"rule", st->rule}};
  auto* self = const_cast<ReclaimBook*>(&book);
  const ReclaimRule* rule = self->rule(st->rule);
  if (st->phase == ReclaimPhase::kActive) {
    j["running_since"] = when(st->running_since);
    j["last_activity"] = when(st->last_activity);
    j["evidence"] = st->evidence;
    if (rule) {
      const milliseconds t = timeout_of(*st, *rule);
      j["timeout_seconds"] = duration_cast<seconds>(t).count();
      j["idle_at"] = when(std::max(st->last_activity, st->running_since) + t);
      j["learned"] = rule->spec.learn_arrivals && st->timeout_in_force.count() > 0;
    }
    if (st->woken_at) j["woken_at"] = when(*st->woken_at);
  } else {
    j["at_zero_since"] = when(st->at_zero_since);
    j["action"] = to_string(st->action);
    j["reason"] = st->reason;
    if (st->phase == ReclaimPhase::kAtZero) {
      j["quota"] = st->lent ? "Lent" : "Reserved";
      j["reserved_until"] = when(st->reserved_until);
    } else {
      j["quota"] = st->phase == ReclaimPhase::kWaking ? "Queued" : "Released";
    }
  }
  (void)model;
  return j.dump();
}

}  // namespace gpuaas::core
