// Knative's autoscaler, as the knative baseline plays it for services that take requests: with
// no request for the stable window (60 s, Knative's default) the revision goes to zero after the
// scale-to-zero grace period (30 s); the next request wakes it (its pods start again, the
// requests meanwhile wait: cold starts). The workload stays admitted at zero, so its quota is
// held (Kueue would not know it scaled). gpuaas's own reclaim (issue #6) comes through gpuaasd's
// actions instead.
#include <algorithm>

#include "simulation_state.hpp"

namespace gpuaas::sim {

namespace {
constexpr Millis kStableWindow{std::chrono::seconds(60)};
constexpr Millis kScaleToZeroGrace{std::chrono::seconds(30)};
constexpr Millis kQuiet = kStableWindow + kScaleToZeroGrace;
}  // namespace

int64_t Simulation::reserved_gpu_milli(const SimWorkload& w) const {
  // What its pods hold when they run: the pod sets the object asks for, as admitted.
  int64_t milli = 0;
  for (const auto& s : w.kind->pods(w.object)) milli += int64_t{s.count} * s.gpu_milli;
  return milli;
}

void Simulation::serving_started(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (options_.policy != Baseline::kKnative || !serves_requests(w)) return;
  const uint64_t token = w.epoch;
  agenda_.at(now_ + kQuiet, [this, i, token] { zero_check(i, token); });
}

void Simulation::zero_check(std::size_t i, uint64_t token) {
  SimWorkload& w = workloads_[i];
  if (w.epoch != token || w.state != WorkloadState::kBusy || w.waking) return;
  if (requests_between(w, now_ - kQuiet, now_) == 0) {
    scale_to_zero(i);
    return;
  }
  // Check again once the latest request is kQuiet old.
  Time next = now_ + kQuiet;
  if (const auto& a = w.spec->arrivals_ms) {
    const int64_t at = (now_ - scenario_.start).count();
    auto it = std::upper_bound(a->begin(), a->end(), at);
    if (it != a->begin()) next = scenario_.start + Millis(*std::prev(it)) + kQuiet;
    if (next <= now_) next = now_ + Millis(1);
  }
  agenda_.at(next, [this, i, token] { zero_check(i, token); });
}

void Simulation::scale_to_zero(std::size_t i) {
  SimWorkload& w = workloads_[i];
  const uint64_t epoch = w.epoch;
  stop_pods(i);
  // Not a stop of the workload: its deletion and its busy time stay where they were.
  w.epoch = epoch;
  w.state = WorkloadState::kAtZero;
  w.at_zero_since = now_;
  w.unserved_since = now_;
  const int64_t reserved = reserved_gpu_milli(w);
  zero_gpu_milli_ += reserved;
  tenant_zero_milli_[w.spec->namespace_] += reserved;
  // The next request wakes it.
  if (const auto& a = w.spec->arrivals_ms) {
    const int64_t at = (now_ - scenario_.start).count();
    auto it = std::upper_bound(a->begin(), a->end(), at);
    if (it != a->end()) {
      const Time t = scenario_.start + Millis(*it);
      if (t <= end_)
        agenda_.at(t, [this, i, epoch] {
          if (workloads_[i].epoch == epoch) wake(i);
        });
    }
  }
}

void Simulation::wake(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (w.state != WorkloadState::kAtZero) return;
  const int64_t reserved = reserved_gpu_milli(w);
  zero_gpu_milli_ -= reserved;
  tenant_zero_milli_[w.spec->namespace_] -= reserved;
  w.waking = true;
  ++result_.wakes;
  wake_started_[i] = now_;
  reconcile(i);  // the operator runs its pods again
}

void Simulation::woke(std::size_t i) {
  SimWorkload& w = workloads_[i];
  w.waking = false;
  if (w.at_zero_since) result_.cold_starts += requests_between(w, *w.at_zero_since, now_);
  w.at_zero_since.reset();
  result_.wake_latency.samples.push_back(
      std::chrono::duration<double>(now_ - wake_started_[i]).count());
}

}  // namespace gpuaas::sim
