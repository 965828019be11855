// A workload at zero: a service Knative's autoscaler took to zero (minReplicas 0 and no traffic
// for its stable window and grace: simulation_autoscale.cpp), woken by its next request (its pods
// start again; the requests meanwhile wait: cold starts), or a workload gpuaas's reclaim scaled
// to zero (simulation_reclaim.cpp), which shares these accounts. Knative's zero keeps the
// workload admitted, so its quota is held (Kueue would not know it scaled).
#include <algorithm>

#include "simulation_state.hpp"

namespace gpuaas::sim {

// Knative stops every pod; gpuaas's patch leaves what the object still asks for (a RayCluster's
// head) running.
void Simulation::enter_zero(std::size_t i, bool by_gpuaas) {
  SimWorkload& w = workloads_[i];
  if (w.waking && w.at_zero_since) {  // sent back before it woke: its waiting requests were cold
    result_.cold_starts += requests_between(w, *w.at_zero_since, now_);
    w.waking = false;
  }
  const uint64_t epoch = w.epoch;
  if (autoscaled(w)) set_replicas(i, 0);
  const int64_t milli = stop_pods(i, by_gpuaas ? w.kind->pods(w.object) : std::vector<PodShape>{});
  // Not a stop of the workload: its deletion and its busy time stay where they were.
  w.epoch = epoch;
  w.state = WorkloadState::kAtZero;
  w.at_zero_since = now_;
  // Sent back while waking: waiting since then (the latency model's queue keeps them itself).
  if (!latency_model(w) && !w.unserved_since) w.unserved_since = now_;
  w.reclaimed = by_gpuaas;
  w.zero_gpu_milli = milli;
  w.zero_counted = true;
  ++w.zero_token;
  zero_gpu_milli_ += milli;
  // Knative's scale is unknown to Kueue: the quota stays held. gpuaas's is as explain says
  // (refresh_quota_held after each instant).
  if (by_gpuaas) {
    reclaimed_at_zero_.insert(i);
    w.activator = true;
    activated_.insert(i);
    publish_request_count(i);  // the counter now, so that the next request shows as a rise
  } else {
    hold_quota(w, true);
  }
  next_request_at_zero(i);
}

void Simulation::leave_zero(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (!w.zero_counted) return;
  hold_quota(w, false);
  zero_gpu_milli_ -= w.zero_gpu_milli;
  w.zero_gpu_milli = 0;
  w.zero_counted = false;
  reclaimed_at_zero_.erase(i);
}

void Simulation::hold_quota(SimWorkload& w, bool held) {
  if (w.quota_held == held) return;
  const int64_t d = held ? w.zero_gpu_milli : -w.zero_gpu_milli;
  held_zero_milli_ += d;
  tenant_held_milli_[w.spec->namespace_] += d;
  w.quota_held = held;
}

// The next request to a service at zero: at Knative's zero it wakes the service; at gpuaas's the
// activator reports it at once and gpuaasd decides (its SCALE_BACK wakes it), and each further
// request is reported while it stays at zero or wakes (no pod takes them yet).
void Simulation::next_request_at_zero(std::size_t i) {
  SimWorkload& w = workloads_[i];
  const auto& a = w.spec->arrivals_ms;
  if (!a) return;  // a constant rate shows in the metrics every interval
  const int64_t at = (now_ - scenario_.start).count();
  auto it = std::upper_bound(a->begin(), a->end(), at);
  if (it == a->end()) return;
  const Time t = scenario_.start + Millis(*it);
  if (t > end_) return;
  const uint64_t token = w.zero_token;
  agenda_.at(t, [this, i, token] {
    SimWorkload& z = workloads_[i];
    if (z.zero_token != token) return;
    if (!z.activator) {
      if (z.state == WorkloadState::kAtZero) wake(i);
      return;
    }
    publish_request_count(i);
    next_request_at_zero(i);
  });
}

void Simulation::begin_wake(std::size_t i, Time from) {
  workloads_[i].waking = true;
  ++result_.wakes;
  wake_started_[i] = from;
}

void Simulation::wake(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (w.state != WorkloadState::kAtZero) return;
  leave_zero(i);
  begin_wake(i, now_);
  w.state = WorkloadState::kQueued;
  reconcile(i);  // the operator runs its pods again
}

void Simulation::woke(std::size_t i) {
  SimWorkload& w = workloads_[i];
  w.waking = false;
  w.activator = false;  // its pods report its requests again
  activated_.erase(i);
  if (w.at_zero_since) result_.cold_starts += requests_between(w, *w.at_zero_since, now_);
  w.at_zero_since.reset();
  result_.wake_latency.samples.push_back(
      std::chrono::duration<double>(now_ - wake_started_[i]).count());
}

}  // namespace gpuaas::sim
