// PoolScaler in a snapshot. A pool's spec is the policy's and is not written, only its name (to
// check that the policy is the same); everything it learned and asked for is, the demand trend
// with all of its fields, and what its counters were raised by (a restored scaler's new counters
// are raised as much).
#include <memory>

#include "gpuaas/base/archive.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pool_scaler.hpp"

namespace gpuaas::core::scaleout {

template <typename A>
void PoolScaler::archive_pool(A& a, Pool& p) {
  a(p.quota_milli, p.asked, p.nodes, p.unneeded_since, p.draining, p.removing, p.launched,
    p.failures, p.requests, p.backoff_until, p.backoff_next, p.last_scale_up, p.observed_since,
    p.lead_seconds, p.lead_samples, p.last_plan, p.last_note);
  // The trend is owned through a pointer: a flag, then its fields.
  bool has = p.trend != nullptr;
  a(has);
  if constexpr (A::kLoading) {
    if (!has) p.trend.reset();
    if (has && !p.trend) p.trend = std::make_unique<DemandTrend>(p.spec.forecast_window);
  }
  if (has) a(*p.trend);
}

void PoolScaler::save_state(base::ArchiveWriter& w) const {
  w(cordoned_, next_scan_, scale_counts_, failure_counts_);
  w.count(pools_.size());
  for (const auto& pool : pools_) {
    w(pool.spec.name);
    archive_pool(w, const_cast<Pool&>(pool));  // the writer only reads
  }
}

void PoolScaler::load_state(base::ArchiveReader& r) {
  r(cordoned_, next_scan_, scale_counts_, failure_counts_);
  const std::size_t n = r.count();
  if (r.ok() && n != pools_.size()) {
    r.fail("the snapshot has " + std::to_string(n) + " node pools, the policy " +
           std::to_string(pools_.size()));
    return;
  }
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::string name;
    r(name);
    if (!r.ok()) return;
    if (name != pools_[i].spec.name) {
      r.fail("the snapshot's node pool " + name + " is not the policy's " + pools_[i].spec.name);
      return;
    }
    archive_pool(r, pools_[i]);
  }
  if (!r.ok()) return;
  // Counters only rise: the fresh scaler's start at zero and are raised to the original's.
  if (scale_actions_)
    for (const auto& [labels, raised] : scale_counts_)
      scale_actions_->Add({{"pool", labels[0]}, {"direction", labels[1]}, {"rule", labels[2]}})
          .Increment(raised);
  if (failures_)
    for (const auto& [pool, raised] : failure_counts_)
      failures_->Add({{"pool", pool}}).Increment(raised);
}

void PoolScaler::adopt_state(PoolScaler&& other) {
  // The telemetry is the process's: it stays; everything else is the other scaler's.
  auto* const keep_nodes = nodes_gauge_;
  auto* const keep_scale = scale_actions_;
  auto* const keep_failures = failures_;
  auto* const keep_lead = lead_gauge_;
  auto* const keep_demand = demand_gauge_;
  auto* const keep_desired = desired_gauge_;
  *this = std::move(other);
  nodes_gauge_ = keep_nodes;
  scale_actions_ = keep_scale;
  failures_ = keep_failures;
  lead_gauge_ = keep_lead;
  demand_gauge_ = keep_demand;
  desired_gauge_ = keep_desired;
}

PoolScaler::PassHook& PoolScaler::pass_hook() {
  static PassHook hook;
  return hook;
}

}  // namespace gpuaas::core::scaleout
