// A bound on what preemption could ever give a retry, so that a pass settles most retries of a
// preempting ClusterQueue without running flavor assignment and victim search for each. The
// bound counts every workload a rule could make a victim (ignoring protection windows,
// deadlines, fair-sharing shares, evicted-by and the flavors a victim uses), and everything
// already being evicted as free: when even that cannot hold the workload, the full attempt
// would fail the same way, so skipping it changes no decision. It reads the victim pools
// (victim_pool.cpp), summed once per pass.
#include <algorithm>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {
namespace {

int64_t amount_of(const FrAmounts& a, int fr) {
  for (const auto& x : a)
    if (x.fr == fr) return x.milli;
  return 0;
}

// Usage of the admitted (not evicting) work with priority below `p` (or at most `p`).
int64_t below(const VictimPool& pool, int fr, int32_t p, bool or_equal) {
  int64_t sum = 0;
  for (const auto& [priority, usage] : pool.by_priority) {
    if (priority > p || (priority == p && !or_equal)) break;
    sum += amount_of(usage, fr);
  }
  return sum;
}

}  // namespace

bool Scheduler::State::partial(const Entry& e) {
  for (const auto& ps : e.info.pod_sets)
    if (ps.min_count > 0 && ps.min_count < ps.count) return true;
  return false;
}

Amounts Scheduler::State::least_total(const Entry& e) const {
  if (!partial(e)) return e.total;
  Amounts least;
  for (const auto& ps : e.info.pod_sets) {
    const int64_t n = ps.min_count > 0 && ps.min_count < ps.count ? ps.min_count : ps.count;
    for (const auto& amt : ps.per_pod) {
      auto it = std::find_if(least.begin(), least.end(),
                             [&](const Amount& t) { return t.resource == amt.resource; });
      if (it == least.end()) it = least.insert(least.end(), Amount{amt.resource, 0});
      it->milli += amt.milli * n;
    }
  }
  return least;
}

bool Scheduler::State::may_fit_with_preemption(const Entry& e) {
  const auto& cq = policy->cluster_queues[static_cast<std::size_t>(e.cq)];
  const auto& pre = cq.preemption;
  const bool fair = policy->admission.fair_sharing;
  const bool own_on = pre.within_cluster_queue != policy::WithinClusterQueue::kNever;
  const bool own_equal =
      pre.within_cluster_queue == policy::WithinClusterQueue::kLowerOrNewerEqualPriority;
  const bool reclaim =
      tree->root_of(e.cq) >= 0 && pre.reclaim_within_cohort != policy::ReclaimWithinCohort::kNever;
  const bool reclaim_any = pre.reclaim_within_cohort == policy::ReclaimWithinCohort::kAny;
  const bool bwc = pre.borrow_within_cohort == policy::BorrowWithinCohort::kLowerPriority;
  const auto& group = tree->cluster_queues_under_root_of(e.cq);
  const auto& cov = covered[static_cast<std::size_t>(e.cq)];
  const Amounts least = partial(e) ? least_total(e) : Amounts{};
  for (const auto& t : partial(e) ? least : e.total) {
    if (t.milli <= 0) continue;
    const auto cr = std::find_if(
        cov.begin(), cov.end(), [&](const CoveredResource& x) { return x.resource == t.resource; });
    if (cr == cov.end()) continue;  // flavor assignment says what is wrong with it
    bool any = false;
    for (int fr : cr->frs) {
      // Free once what is evicting stops; own lower-priority work (never strict); other
      // queues' work, all of it (reclaiming) and what lets the preemptor borrow.
      int64_t freed = 0, own = 0, own_evicting = 0, other = 0, other_lending = 0;
      for (int q : group) {
        const VictimPool& pool = victim_pool(q);
        const int64_t evicting = amount_of(pool.evicting, fr);
        freed += evicting;
        if (q == e.cq) {
          own_evicting = evicting;
          if (own_on) own = below(pool, fr, e.priority, own_equal);
          continue;
        }
        if (!reclaim || !tree->is_borrowing(q)) continue;
        const int64_t all =
            reclaim_any ? below(pool, fr, INT32_MAX, true) : below(pool, fr, e.priority, false);
        other += all;
        if (fair) {
          other_lending += all;
        } else if (bwc) {
          const int32_t cap = pre.borrow_max_priority_threshold
                                  ? std::min(*pre.borrow_max_priority_threshold, e.priority - 1)
                                  : e.priority - 1;
          other_lending += below(pool, fr, cap, true);
        }
      }
      const int64_t avail = tree->available(e.cq, fr) + freed;
      // Without a victim that forbids borrowing; or with one, then within nominal quota.
      if (avail + own + other_lending >= t.milli ||
          (other > other_lending && avail + own + other >= t.milli &&
           tree->usage(e.cq, fr) - own_evicting - own + t.milli <= tree->nominal(e.cq, fr))) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  return true;
}

}  // namespace gpuaas::core::admission
