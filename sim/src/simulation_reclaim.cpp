// gpuaas's idle reclaim as the cluster plays it: gpuaasd publishes a plugin's SCALE_TO_ZERO patch
// (rule reclaim/idle) and later its SCALE_BACK (reclaim/wake); the operator stops and restarts
// the pods, and the simulator keeps the same accounts as for the knative baseline (at zero, cold
// starts, wakes, wake latency). A scaled object is told from a suspended one by gpuaas's record
// of what it changed (scaled_to_zero in kind_model.hpp). An InferenceService in Knative mode is
// only given minReplicas 0: Knative removes its last pod once its stable window has seen no
// traffic for the grace period (simulation_autoscale.cpp), and that zero is gpuaas's. While a
// service is at zero its ingress reports each request at once, as Knative's activator would, so
// gpuaasd can wake it.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "simulation_state.hpp"

namespace gpuaas::sim {

using nlohmann::json;

bool Simulation::follow_reclaim(std::size_t i) {
  SimWorkload& w = workloads_[i];
  const bool scaled = scaled_to_zero(w.object);
  const bool running = w.state == WorkloadState::kBusy || w.state == WorkloadState::kIdle ||
                       w.state == WorkloadState::kStarting;
  if (scaled && running && !w.pods.empty()) {
    if (autoscaled(w) && w.kind->admitted(w.object)) return true;  // Knative's to remove
    enter_zero(i, true);
    return true;
  }
  if (w.state != WorkloadState::kAtZero) return false;
  if (scaled) return true;  // still at zero (a RayCluster's head runs on)
  const bool admitted = w.kind->admitted(w.object);
  if (w.reclaimed && admitted) {
    scaled_back(i);
    return true;
  }
  if (admitted) return true;  // the knative baseline's: a request wakes it, not a patch
  // Suspended at zero: it waits in the queue now; the requests it missed were cold.
  if (w.at_zero_since) result_.cold_starts += requests_between(w, *w.at_zero_since, now_);
  w.at_zero_since.reset();
  leave_zero(i);
  w.reclaimed = false;
  w.activator = false;
  activated_.erase(i);
  return false;
}

// SCALE_BACK: the pods the object asks for again start (the start-up delay as usual); the wake
// counts from the first request that found the service at zero (gpuaasd's reaction is part of
// it), or from now when gpuaasd wakes it unasked.
void Simulation::scaled_back(std::size_t i) {
  SimWorkload& w = workloads_[i];
  Time from = now_;
  if (w.at_zero_since && requests_between(w, *w.at_zero_since, now_ + Millis(1)) > 0) {
    if (const auto& a = w.spec->arrivals_ms) {
      const int64_t at = (*w.at_zero_since - scenario_.start).count();
      auto it = std::lower_bound(a->begin(), a->end(), at);
      if (it != a->end()) from = std::min(now_, scenario_.start + Millis(*it));
    }
  }
  leave_zero(i);
  w.reclaimed = false;
  begin_wake(i, from);
  w.state = WorkloadState::kStarting;
  if (autoscaled(w)) set_replicas(i, bounded_replicas(w, 1));
  if (create_pods(i, wanted_pods(i)) == 0) {
    for (uint64_t id : w.pods) {
      const SimPod* p = cluster_.pod(id);
      if (p == nullptr || !p->running) return;
    }
    all_pods_running(i);
  }
}

// The ingress's request counter of the service (Knative's revision_request_count, named by
// service_name as the kserve plugin matches it): every request since it was submitted.
void Simulation::add_request_count(v1::MetricBatch& batch, std::size_t i) {
  const SimWorkload& w = workloads_[i];
  auto* s = batch.add_samples();
  s->set_name("revision_request_count");
  s->set_value(static_cast<double>(requests_between(w, w.submitted, now_ + Millis(1))));
  add_metric_labels(
      *s, {{"namespace", w.spec->namespace_}, {"service_name", w.instance.name + "-predictor"}});
}

void Simulation::publish_request_count(std::size_t i) {
  if (!serves_requests(workloads_[i])) return;
  v1::MetricBatch batch;
  add_request_count(batch, i);
  driver_->metrics(workloads_[i].spec->namespace_, std::move(batch), now_);
}

// Whether gpuaasd still holds the quota of each workload it scaled to zero: explain's
// "reclaim": {"quota": "Reserved" | "Lent" | "Returning" | "Released"}; without it, its admission
// state "ScaledToZero" (parked with its reservation); else released.
void Simulation::refresh_quota_held() {
  for (std::size_t i : reclaimed_at_zero_) {
    SimWorkload& w = workloads_[i];
    const json x = json::parse(driver_->explain_json(w.key), nullptr, false);
    bool held = false;
    if (x.is_object()) {
      if (auto r = x.find("reclaim"); r != x.end() && r->is_object()) {
        const std::string quota = r->value("quota", "");
        held = quota == "Reserved" || quota == "Lent" || quota == "Returning";
      } else if (auto st = x.find("state"); st != x.end() && st->is_string()) {
        held = *st == "ScaledToZero";
      }
    }
    hold_quota(w, held);
  }
}

// dcgm-exporter's GPU utilisation of a workload's devices: its own while busy; a service that
// takes requests is busy only in intervals with requests (else its GPUs idle, so that an idle
// policy can see it); 0 when idle.
double Simulation::gpu_util(const SimWorkload& w) {
  if (w.state != WorkloadState::kBusy) return 0.0;
  if (serves_requests(w) && requests_between(w, now_ - scenario_.metrics_interval, now_) == 0)
    return 0.0;
  return w.spec->utilization * 100.0;
}

}  // namespace gpuaas::sim
