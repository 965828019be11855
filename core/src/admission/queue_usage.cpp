// The ClusterQueues' reservations as plain values, for status pages and metrics.
#include "scheduler_state.hpp"

namespace gpuaas::admission {

std::vector<ClusterQueueUsage> Scheduler::cluster_queue_usage() const {
  std::vector<ClusterQueueUsage> out;
  const auto& s = *s_;
  for (int c = 0; c < s.tree->cluster_queue_count(); ++c) {
    ClusterQueueUsage u;
    u.name = s.tree->cluster_queue_name(c);
    if (const auto* cq = s.policy->cluster_queue(u.name)) u.cohort = cq->cohort;
    const auto& q = s.cqs[static_cast<std::size_t>(c)];
    u.pending = static_cast<int64_t>(q.pending.size());
    u.admitted = static_cast<int64_t>(q.admitted.size());
    for (int fr = 0; fr < s.tree->fr_count(); ++fr) {
      if (!s.tree->covers(c, fr)) continue;
      u.resources.push_back({s.tree->flavor_name(s.tree->fr_flavor(fr)),
                             s.resources.name(s.tree->fr_resource(fr)), s.tree->nominal(c, fr),
                             s.tree->usage(c, fr)});
    }
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace gpuaas::admission
