// KServe's autoscaler in Knative mode, as the simulator plays it for every InferenceService that
// takes requests, in every policy's run: each tick (2 s) Knative's decider (kpa.hpp) reads the
// object's minReplicas, maxReplicas, scaleMetric and scaleTarget (so a patch counts from the
// next tick) and the service's traffic, and the operator adds or removes predictor pods. New
// pods start like any other (binding, start-up delay); a stopped one frees its GPUs at once.
// With minReplicas 0 the last pod goes once the stable window has seen no traffic for the grace
// period; the next request wakes the service (simulation_serving.cpp).
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "simulation_state.hpp"

namespace gpuaas::sim {

using nlohmann::json;

namespace {
constexpr const char* kPredictor = "predictor";
}

bool Simulation::autoscaled(const SimWorkload& w) {
  return w.spec->kind == "InferenceService" && serves_requests(w);
}

// Knative starts a revision with max(initial-scale 1, minReplicas) pods, within maxReplicas.
int32_t Simulation::bounded_replicas(const SimWorkload& w, int32_t n) const {
  const KpaTarget t = kpa_target(w.object);
  n = std::max({n, t.min_replicas, 1});
  return t.max_replicas > 0 ? std::min(n, t.max_replicas) : n;
}

void Simulation::set_replicas(std::size_t i, int32_t n) {
  SimWorkload& w = workloads_[i];
  if (n == w.replicas) return;
  w.replicas = n;
  result_.services[w.key].replicas.emplace_back(
      std::chrono::duration<double>(now_ - scenario_.start).count(), n);
}

// The pods the operator runs: the kind's, with an autoscaled predictor at Knative's count.
std::vector<PodShape> Simulation::wanted_pods(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (!autoscaled(w)) return w.kind->pods(w.object);
  json o = w.object;
  // minReplicas 0 leaves the count to Knative; the pods are the same.
  if (auto s = o.find("spec"); s != o.end() && s->contains(kPredictor))
    (*s)[kPredictor]["minReplicas"] = 1;
  std::vector<PodShape> shapes = w.kind->pods(o);
  for (auto& s : shapes)
    if (s.pod_set == kPredictor) s.count = std::max(1, w.replicas);
  return shapes;
}

// To Knative's count within the object's bounds: new pods are created; extra ones stop, those
// not yet running first, then the newest, as a ReplicaSet scales down.
void Simulation::resize(std::size_t i) {
  SimWorkload& w = workloads_[i];
  set_replicas(i, bounded_replicas(w, w.replicas));
  std::vector<std::pair<uint64_t, const SimPod*>> mine;
  for (uint64_t id : w.pods)
    if (const SimPod* p = cluster_.pod(id); p != nullptr && p->pod_set == kPredictor)
      mine.emplace_back(id, p);
  if (static_cast<int32_t>(mine.size()) < w.replicas) {
    create_pods(i, wanted_pods(i));
    return;
  }
  std::sort(mine.begin(), mine.end(), [](const auto& x, const auto& y) {
    const SimPod& a = *x.second;
    const SimPod& b = *y.second;
    if (a.running != b.running) return !a.running;
    if (a.node.empty() != b.node.empty()) return a.node.empty();
    return a.running ? a.running_since > b.running_since : a.created > b.created;
  });
  std::vector<uint64_t> victims;
  for (std::size_t k = 0; k + static_cast<std::size_t>(w.replicas) < mine.size(); ++k)
    victims.push_back(mine[k].first);
  for (uint64_t id : victims) stop_replica(i, id);
}

// One replica goes (not the workload): its GPUs are free at once, the others run on.
void Simulation::stop_replica(std::size_t i, uint64_t id) {
  SimWorkload& w = workloads_[i];
  const SimPod* p = cluster_.pod(id);
  if (p == nullptr) return;
  close_replica(i, id);
  if (!p->node.empty()) {
    tenant_alloc_milli_[p->namespace_] -= p->gpu_milli;
    w.gpu_milli_bound -= p->gpu_milli;
    if (w.state == WorkloadState::kBusy) {
      busy_gpu_milli_ -= p->gpu_milli;
      tenant_busy_milli_[p->namespace_] -= p->gpu_milli;
    }
  }
  publish_pod(id, Change::kDeleted);
  cluster_.remove_pod(id);
  pod_rv_.erase(id);
  w.pods.erase(std::remove(w.pods.begin(), w.pods.end(), id), w.pods.end());
}

void Simulation::kpa_tick() {
  for (std::size_t i : serving_)
    if (autoscaled(workloads_[i])) kpa_step(i);
}

void Simulation::kpa_step(std::size_t i) {
  SimWorkload& w = workloads_[i];
  const KpaTarget t = kpa_target(w.object);
  if (w.state == WorkloadState::kAtZero) {
    // minReplicas raised while Knative had it at zero (a patch): its pods come back now.
    if (!w.reclaimed && t.min_replicas > 0 && w.kind->admitted(w.object)) wake(i);
    return;
  }
  if (w.state != WorkloadState::kBusy && w.state != WorkloadState::kIdle) return;
  run_requests(i, now_ms());
  const double forget = now_ms() - static_cast<double>(kpa::kStableWindow.count());
  std::erase_if(w.recent, [forget](const auto& r) { return r.second < forget; });
  int32_t ready = 0;
  for (uint64_t id : w.pods)
    if (const SimPod* p = cluster_.pod(id); p != nullptr && p->running && p->pod_set == kPredictor)
      ++ready;
  const bool rps = t.metric == KpaTarget::Metric::kRps;
  const double stable =
      rps ? arrival_rate(w, kpa::kStableWindow) : concurrency(w, kpa::kStableWindow);
  const double panic = rps ? arrival_rate(w, kpa::kPanicWindow) : concurrency(w, kpa::kPanicWindow);
  int32_t want = w.kpa.decide(static_cast<int64_t>(now_ms()), stable, panic, ready, t.per_pod);
  const bool active = active_within(w, kpa::kStableWindow);
  if (t.min_replicas == 0 && !active) {
    if (!w.zero_wanted_since) w.zero_wanted_since = now_;
    if (now_ - *w.zero_wanted_since >= kpa::kScaleToZeroGrace) {
      // With gpuaas's record (its SCALE_TO_ZERO in Knative mode) the zero is gpuaas's.
      enter_zero(i, scaled_to_zero(w.object));
      return;
    }
  } else {
    w.zero_wanted_since.reset();
  }
  want = bounded_replicas(w, want);  // at least one while there is traffic or a grace runs
  if (want != w.replicas) {
    set_replicas(i, want);
    resize(i);
  }
}

}  // namespace gpuaas::sim
