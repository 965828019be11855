// The ClusterQueues' reservations as plain values, for status pages and metrics.
#include <cstring>
#include <map>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

namespace {

// Kueue's inadmissible: a pending workload that was tried and does not fit. Those still to be
// tried, or waiting for their preemptions to finish, are active.
bool inadmissible(const char* reason) {
  for (const char* active : {reason::kPending, reason::kWaitingForPreemptedWorkloads,
                             reason::kWaitingForPreemptionDelay})
    if (std::strcmp(reason, active) == 0) return false;
  return true;
}

}  // namespace

std::vector<ClusterQueueUsage> Scheduler::cluster_queue_usage() const {
  std::vector<ClusterQueueUsage> out;
  const auto& s = *s_;
  const QuotaTree& tree = *s.tree;
  for (int c = 0; c < tree.cluster_queue_count(); ++c) {
    ClusterQueueUsage u;
    u.name = tree.cluster_queue_name(c);
    if (const auto* cq = s.policy->cluster_queue(u.name)) u.cohort = cq->cohort;
    const auto& q = s.cqs[static_cast<std::size_t>(c)];
    u.pending = static_cast<int64_t>(q.pending.size());
    u.admitted = static_cast<int64_t>(q.admitted.size());
    u.weighted_share = tree.dominant_resource_share(c);
    // Reservations at zero that are lent are out of the tree's usage, yet still the queue's.
    std::vector<int64_t> lent(static_cast<std::size_t>(tree.fr_count()), 0);
    for (uint32_t id : q.admitted) {
      const Entry& e = s.entries[id];
      if (e.lent)
        for (const auto& a : e.usage) lent[static_cast<std::size_t>(a.fr)] += a.milli;
    }
    std::map<std::string, int64_t> pending_gpus;
    const std::vector<int>* gpu_frs = nullptr;
    for (const auto& cr : s.covered[static_cast<std::size_t>(c)])
      if (cr.resource == s.gpu) gpu_frs = &cr.frs;
    for (const QueueKey& k : q.pending) {
      const Entry& e = s.entries[k.entry];
      if (inadmissible(e.reason)) ++u.pending_inadmissible;
      const int64_t need = s.gpu_need(e);
      if (need <= 0 || gpu_frs == nullptr || gpu_frs->empty()) continue;
      int fr = gpu_frs->front();
      for (int f : *gpu_frs)
        if (tree.potential_available(c, f) >= need) {
          fr = f;
          break;
        }
      pending_gpus[tree.flavor_name(tree.fr_flavor(fr))] += need;
    }
    u.pending_gpu_milli.assign(pending_gpus.begin(), pending_gpus.end());
    for (int fr = 0; fr < tree.fr_count(); ++fr) {
      if (!tree.covers(c, fr)) continue;
      const auto i = static_cast<std::size_t>(fr);
      ClusterQueueUsage::Resource r;
      r.flavor = tree.flavor_name(tree.fr_flavor(fr));
      r.resource = s.resources.name(tree.fr_resource(fr));
      r.nominal_milli = tree.nominal(c, fr);
      r.borrowing_limit_milli = tree.borrowing_limit(c, fr);
      r.lending_limit_milli = tree.lending_limit(c, fr);
      r.reservation_milli = tree.usage(c, fr) + lent[i];
      r.usage_milli = tree.usage(c, fr);
      u.resources.push_back(std::move(r));
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::string Scheduler::cluster_queue_of(const std::string& key) const {
  const auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return {};
  const Entry& e = s.entries[id];
  return e.cq < 0 ? std::string() : s.tree->cluster_queue_name(e.cq);
}

}  // namespace gpuaas::core::admission
