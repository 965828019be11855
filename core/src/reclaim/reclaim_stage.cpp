#include "reclaim/reclaim_stage.hpp"
#include "admission/stage/admission_inputs.hpp"

#include <spdlog/spdlog.h>

#include <optional>
#include <unordered_map>

#include "admission/stage/admission_stage.hpp"
#include "gpuaas/base/archive.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "reclaim/activity_reader.hpp"

namespace gpuaas::core {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Decisions are taken at the first event at least this long after the previous look.
constexpr seconds kReclaimInterval{5};

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
    rule.budget->record_gap(*gap, idle_timeout(st, rule), weight);
  st.timeout_in_force = st.arrivals->timeout(rule.budget->lambda_seconds(), weight);
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

}  // namespace

milliseconds idle_timeout(const ReclaimState& st, const ReclaimRule& rule) {
  if (rule.spec.learn_arrivals && st.timeout_in_force.count() > 0) return st.timeout_in_force;
  return std::max(rule.spec.idle_window, rule.spec.stabilization_window) + rule.spec.grace_period;
}

int running_pods(const std::vector<const KubeObject*>& pods) {
  int n = 0;
  for (const KubeObject* p : pods)
    if (p->pod && p->pod->phase == "Running") ++n;
  return n;
}

ReclaimStage::ReclaimStage(telemetry::Registry* registry, WorkloadInterpreter* interpreter)
    : interpreter_(interpreter) {
  if (!registry) return;
  actions_ = &telemetry::BuildCounter()
                  .Name("gpuaas_reclaim_actions_total")
                  .Help(
                      "Idle reclaim and notebook gating steps, by action (ScaleToZero, "
                      "Suspend, Stop, Wake, Release, Gate, MaxWaitExceeded) and rule.")
                  .Register(*registry);
  workloads_ = &telemetry::BuildGauge()
                    .Name("gpuaas_reclaim_workloads")
                    .Help(
                        "Workloads idle reclaim watches, by phase (Active, AtZero with "
                        "quota reserved, Released, Waking).")
                    .Register(*registry);
}

void ReclaimStage::forget(const std::string& key) {
  book_.states().erase(key);
  gated_.erase(key);
  max_wait_reported_.erase(key);
}

// A workload that runs on another (a RayJob on a RayCluster) and still waits or runs is demand
// for that one: at zero, it wakes.
void ReclaimStage::wake_host(const ClusterModel& model, const KubeObject& obj,
                             const WorkloadView& v, AdmissionStage& admission, DecisionSink& sink,
                             std::vector<admission::Decision>& out) {
  using S = v1::WorkloadLifecycle;
  if (v.lifecycle && (v.lifecycle->state() == S::SUCCEEDED || v.lifecycle->state() == S::FAILED))
    return;
  const auto& on = v.demand->runs_on();
  const std::string host = ClusterModel::key_of(
      {on.api_version(), on.kind(), on.namespace_(), on.name(), {}, {}, {}, {}, {}, false});
  ReclaimState* st = book_.find(host);
  const KubeObject* target = model.object(host);
  if (!st || !target ||
      (st->phase != ReclaimPhase::kAtZero && st->phase != ReclaimPhase::kReleased))
    return;
  wake(model, host, *target, *st,
       obj.meta.kind + " " + obj.meta.namespace_ + "/" + obj.meta.name + " runs on it", admission,
       sink, out);
}

const admission::WorkloadInfo* ReclaimStage::waking_demand(const std::string& key) const {
  const ReclaimState* st = book_.find(key);
  return st && st->phase == ReclaimPhase::kWaking && st->demand ? &*st->demand : nullptr;
}

std::set<std::string> ReclaimStage::waking() const {
  std::set<std::string> out;
  for (const auto& [key, st] : book_.states())
    if (st.phase == ReclaimPhase::kWaking) out.insert(key);
  return out;
}

void ReclaimStage::object_changed(const ClusterModel& model, const std::string& key,
                                  const KubeObject& obj, AdmissionStage& admission,
                                  DecisionSink& sink, std::vector<admission::Decision>& out) {
  const WorkloadView* v = model.view_of(key);
  if (v && v->demand && v->demand->has_runs_on()) wake_host(model, obj, *v, admission, sink, out);
  ReclaimState* st = book_.find(key);
  if (!st) return;
  if (suspended(v)) {
    st->saw_suspended = true;
  } else if (st->saw_suspended && st->phase != ReclaimPhase::kActive &&
             st->phase != ReclaimPhase::kWaking && st->phase != ReclaimPhase::kTakingBack) {
    // Someone started it (a user in the notebook UI): it wakes as asked for.
    wake(model, key, obj, *st, "started by its user", admission, sink, out);
  }
}

// Start watching what runs admitted (by us, or adopted running).
void ReclaimStage::watch_new(const ClusterModel& model, const AdmissionStage& admission) {
  const policy::PolicySet& set = admission.engine().policy();
  const wire::EventTime now = model.now();
  for (const auto& key : admission.queued_keys()) {
    if (book_.find(key)) continue;
    const KubeObject* obj = model.object(key);
    const WorkloadView* v = model.view_of(key);
    if (!obj || !running(v) || !admission.engine().running(key)) continue;
    ReclaimRule* rule = book_.match(*obj, cluster_queue_of(set, *obj, v), v->session);
    if (!rule) continue;
    ReclaimState st;
    st.rule = rule->id;
    st.running_since = now;
    st.last_activity = now;
    if (rule->spec.learn_arrivals)
      st.arrivals = std::make_unique<reclaim::ArrivalModel>(arrival_settings());
    book_.states().emplace(key, std::move(st));
  }
}

void ReclaimStage::pass(const ClusterModel& model, AdmissionStage& admission, DecisionSink& sink,
                        std::vector<admission::Decision>& out) {
  if (const auto& hook = ReclaimBook::pass_hook()) hook(book_, admission.engine().policy());
  const wire::EventTime now = model.now();
  const uint64_t samples = model.stats().samples_recorded;
  const bool new_samples = samples != samples_seen_;
  samples_seen_ = samples;
  const bool full = now >= next_pass_;
  if (!full && !new_samples) return;
  if (full) {
    next_pass_ = now + kReclaimInterval;
    watch_new(model, admission);
  }
  std::vector<std::string> gone;
  // Built at the first workload that needs it: a pass for new samples often needs none.
  std::optional<std::unordered_map<std::string, std::vector<const KubeObject*>>> pods;
  static const std::vector<const KubeObject*> kNoPods;
  for (auto& [key, st] : book_.states()) {
    const KubeObject* obj = model.object(key);
    ReclaimRule* rule = book_.rule(st.rule);
    if (!obj || ended(model.view_of(key)) || !rule) {
      // A reload that drops its rule ends a reservation it held (nothing would end it later).
      if (obj && st.phase == ReclaimPhase::kAtZero)
        release_reservation(model, key, *obj, st, admission, sink);
      gone.push_back(key);
      continue;
    }
    if (st.phase == ReclaimPhase::kWaking || st.phase == ReclaimPhase::kTakingBack)
      continue;  // admission has it
    const bool at_zero = st.phase != ReclaimPhase::kActive;
    if (!full && !at_zero) continue;
    if (!pods) pods = pods_by_workload(model);
    const auto found = pods->find(key);
    const auto& own_pods = found == pods->end() ? kNoPods : found->second;
    if (at_zero) {
      const auto& p = rule->spec;
      if (st.phase == ReclaimPhase::kAtZero && now >= st.reserved_until)
        release_reservation(model, key, *obj, st, admission, sink);
      if (now < st.at_zero_since + p.min_time_at_zero) continue;
      // Asked for while at zero: a request, a task waiting, kernels in use.
      const ActivityVerdict a =
          read_activity(model, *obj, own_pods, p, st.at_zero_since, interpreter_);
      if (a.level == ActivityVerdict::Level::kActive && a.last_active &&
          *a.last_active > st.at_zero_since) {
        learn_arrival(st, *rule, a);  // the gap that ends at zero was a cold start
        wake(model, key, *obj, st, "asked for while at zero: " + a.evidence, admission, sink, out);
      }
      continue;
    }
    look(model, key, *obj, own_pods, st, *rule, admission, sink);
  }
  for (const auto& key : gone) book_.states().erase(key);
  if (full) count_phases();
}

// A running workload: idle for longer than its timeout goes to zero.
void ReclaimStage::look(const ClusterModel& model, const std::string& key, const KubeObject& obj,
                        const std::vector<const KubeObject*>& own_pods, ReclaimState& st,
                        ReclaimRule& rule, AdmissionStage& admission, DecisionSink& sink) {
  const wire::EventTime now = model.now();
  const auto& p = rule.spec;
  if (st.waking_from_pods >= 0 && running_pods(own_pods) > st.waking_from_pods) {
    st.waking_from_pods = -1;
    if (st.woken_at) st.wake_latency = duration_cast<milliseconds>(now - *st.woken_at);
  }
  if (!admission.engine().running(key) || !running(model.view_of(key)) ||
      st.waking_from_pods >= 0) {
    st.running_since = now;  // starting, restarting or waking: not idle yet
    st.last_activity = now;
    return;
  }
  const wire::EventTime fresh = now - std::max(p.idle_window, seconds(60));
  const ActivityVerdict a =
      read_activity(model, obj, own_pods, p, fresh,
                    p.requests_are_activity || p.kernel_activity ? interpreter_ : nullptr);
  st.evidence = a.evidence;
  switch (a.level) {
    case ActivityVerdict::Level::kActive:
    case ActivityVerdict::Level::kIdle:
      if (a.last_active && *a.last_active > st.last_activity) st.last_activity = *a.last_active;
      break;
    case ActivityVerdict::Level::kUnknown:
      if (p.missing_data == policy::MissingData::kNotIdle) st.last_activity = now;
      break;
  }
  learn_arrival(st, rule, a);
  if (opted_out(obj, p)) return;
  if (now - st.running_since < p.min_runtime) return;
  if (st.woken_at && now - *st.woken_at < p.cooldown) return;
  const milliseconds timeout = idle_timeout(st, rule);
  const auto idle_for = now - st.last_activity;
  if (idle_for < timeout) return;
  std::string learned;
  if (rule.budget && st.timeout_in_force.count() > 0) {
    learned = " learned; cold starts so far " + std::to_string(rule.budget->cold_starts()) +
              " against Knative's " + std::to_string(rule.budget->reference_cold_starts()) +
              ", lambda " + std::to_string(static_cast<int>(rule.budget->lambda_seconds())) + "s";
  }
  reclaim(model, key, obj, st, rule,
          "idle for " + secs(duration_cast<milliseconds>(idle_for)) + " (timeout " + secs(timeout) +
              learned + ", " + rule.id + "): " + a.evidence,
          admission, sink);
}

void ReclaimStage::count_phases() {
  if (!workloads_) return;
  int counts[kReclaimPhases] = {};
  for (const auto& [k, st] : book_.states()) {
    const int ph = static_cast<int>(st.phase);
    if (ph >= 0 && ph < kReclaimPhases) ++counts[ph];
  }
  for (auto ph : {ReclaimPhase::kActive, ReclaimPhase::kAtZero, ReclaimPhase::kReleased,
                  ReclaimPhase::kWaking, ReclaimPhase::kTakingBack})
    workloads_->Add({{"phase", to_string(ph)}}).Set(counts[static_cast<int>(ph)]);
}

}  // namespace gpuaas::core
