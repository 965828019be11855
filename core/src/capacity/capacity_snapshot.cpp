// The capacity stage in a snapshot: each replica's last reading and open window, each service's
// windows and totals, so a restart neither loses the estimate nor counts a scrape twice.
#include "capacity/capacity_stage.hpp"
#include "gpuaas/base/archive.hpp"

namespace gpuaas::capacity {
template <typename A>
void archive_fields(A& a, Window& w) {
  a(w.start, w.end, w.requests, w.rate, w.ttft_p95, w.tpot_p95, w.e2e_p95, w.error_rate, w.quality,
    w.waiting);
}
}  // namespace gpuaas::capacity

namespace gpuaas::core {
namespace serving {
template <typename A>
void archive_fields(A& a, ReplicaReading& r) {
  a(r.at, r.has_requests, r.finished, r.good, r.evaluated, r.errors, r.ttft, r.tpot, r.e2e,
    r.waiting);
}
template <typename A>
void archive_fields(A& a, Interval& i) {
  a(i.seconds, i.requests, i.good, i.evaluated, i.errors, i.ttft, i.tpot, i.e2e, i.waiting);
}
}  // namespace serving

template <typename A>
void archive_fields(A& a, CapacityStage::Service& s) {
  a(s.objective, s.namespace_, s.name, s.kind, s.cluster_queue, s.windows, s.requests, s.within,
    s.errors, s.replicas);
}

void CapacityStage::save_state(base::ArchiveWriter& w) const {
  w(services_, next_sweep_);
  w.count(replicas_.size());
  for (const auto& [pod, r] : replicas_) w(pod, r.workload, r.last, r.open);
}

void CapacityStage::load_state(base::ArchiveReader& r) {
  r(services_, next_sweep_);
  replicas_.clear();
  const std::size_t n = r.count(8);
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::string pod;
    Replica x;
    r(pod, x.workload, x.last, x.open);
    replicas_.emplace(std::move(pod), std::move(x));
  }
  estimates_.clear();
}

}  // namespace gpuaas::core
