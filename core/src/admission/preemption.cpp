// Preemption, as Kueue chooses victims: candidates from the preemptor's own ClusterQueue
// (withinClusterQueue) and from ClusterQueues of its cohort that borrow (reclaimWithinCohort;
// the preemptor may itself borrow only while evicting lower-priority work, borrowWithinCohort);
// ordered other queues first, lower priority first, most recently admitted first; taken greedily
// until the workload fits, then each is given back if the workload still fits without it.
// Beyond Kueue: a protection window (recently admitted work is never a victim) and a delay (a
// scale-out may make room first). A workload never preempts the one that evicted it. With
// deadlines on, a running workload of the preemptor's own ClusterQueue that is on time for its
// deadline is not a victim, unless the preemptor's own deadline comes first: a restart loses
// its progress and puts the deadline at risk again, so within a team a deadline outranks
// priority. Deadlines never keep quota from another ClusterQueue, so a tenant cannot shield its
// borrowed GPUs by writing deadlines.
#include <algorithm>
#include <functional>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

bool Scheduler::State::keeps_its_deadline(const Entry& victim, const Entry& preemptor) const {
  if (preemptor.info.deadline && victim.info.deadline &&
      *preemptor.info.deadline < *victim.info.deadline)
    return false;
  return runs_on_time(victim);
}

PreemptionCandidates Scheduler::State::preemption_candidates(const Entry& e, const Assignment& a,
                                                             Time now) {
  const auto& cq = policy->cluster_queues[static_cast<std::size_t>(e.cq)];
  const auto& adm = policy->admission;
  const auto& pre = cq.preemption;
  PreemptionCandidates c;
  auto uses_needed = [&](const Entry& w) {
    for (const auto& u : w.usage)
      for (const auto& n : a.usage)
        if (u.fr == n.fr && u.milli > 0) return true;
    return false;
  };
  // The pools hold admitted work whose quota is in the tree (a parked workload whose quota is
  // lent holds nothing: evicting it would free nothing).
  auto eligible = [&](const Entry& w) {
    if (!uses_needed(w)) return false;
    // Never preempt back one that evicted it: no loops.
    if (std::find(e.evicted_by.begin(), e.evicted_by.end(), w.info.key) != e.evicted_by.end())
      return false;
    if (adm.preemption_protection.count() > 0 && w.admitted_at + adm.preemption_protection > now) {
      const Time t = w.admitted_at + adm.preemption_protection;
      if (!c.unprotected_at || t < *c.unprotected_at) c.unprotected_at = t;
      return false;
    }
    return true;
  };

  // Other queues' work first, in the cohort's order; then the queue's own, in its pool's.
  const bool fair = adm.fair_sharing;
  if (tree->root_of(e.cq) >= 0 &&
      pre.reclaim_within_cohort != policy::ReclaimWithinCohort::kNever) {
    const int64_t own_share = fair ? tree->dominant_resource_share(e.cq, a.usage) : 0;
    reclaimable.assign(cqs.size(), 0);
    bool any = false;
    for (int q : tree->cluster_queues_under_root_of(e.cq)) {
      if (q == e.cq) continue;
      // As Kueue: quota is reclaimed only from ClusterQueues that borrow what the preemptor needs;
      // one within its nominal quota keeps its workloads whatever borrowWithinCohort says.
      bool borrowing = false;
      for (const auto& n : a.usage)
        borrowing = borrowing || tree->usage(q, n.fr) > tree->nominal(q, n.fr);
      if (!borrowing) continue;
      if (fair && tree->dominant_resource_share(q) <= own_share) continue;
      reclaimable[static_cast<std::size_t>(q)] = 1;
      any = true;
    }
    if (any)
      for (uint32_t w_id : cohort_order(e.cq)) {
        const Entry& w = entries[w_id];
        if (!reclaimable[static_cast<std::size_t>(w.cq)]) continue;
        if (pre.reclaim_within_cohort == policy::ReclaimWithinCohort::kLowerPriority &&
            w.priority >= e.priority)
          continue;
        if (!eligible(w)) continue;
        // Fair sharing lets the preemptor borrow up to its share (the share test above).
        const bool lets_borrow =
            fair || (pre.borrow_within_cohort == policy::BorrowWithinCohort::kLowerPriority &&
                     w.priority < e.priority &&
                     (!pre.borrow_max_priority_threshold ||
                      w.priority <= *pre.borrow_max_priority_threshold));
        c.list.push_back({w_id, true, lets_borrow, w.priority,
                          w.admitted_at.time_since_epoch().count(), runs_on_time(w),
                          fair ? "preemption/fairSharing" : "preemption/reclaimWithinCohort"});
      }
  }
  if (pre.within_cluster_queue != policy::WithinClusterQueue::kNever) {
    for (uint32_t w_id : victim_order(e.cq)) {
      const Entry& w = entries[w_id];
      if (w.priority > e.priority) break;  // the pool is in ascending priority
      if (!eligible(w)) continue;
      if (keeps_its_deadline(w, e)) {
        if (c.deadline_kept_count++ == 0) c.deadline_kept = w.info.namespace_ + "/" + w.info.name;
        continue;
      }
      const bool lower = w.priority < e.priority;
      const bool newer_equal =
          pre.within_cluster_queue == policy::WithinClusterQueue::kLowerOrNewerEqualPriority &&
          w.priority == e.priority && w.queued_at > e.queued_at;
      if (lower || newer_equal)
        c.list.push_back({w_id, false, true, w.priority, w.admitted_at.time_since_epoch().count(),
                          false, "preemption/withinClusterQueue"});
    }
  }
  return c;
}

std::vector<std::size_t> Scheduler::State::choose_victims(const Entry& e, const Assignment& a,
                                                          PreemptionCandidates& c,
                                                          bool* waits_for_protection) {
  const bool fair = policy->admission.fair_sharing;
  // Victims from other queues that do not let the preemptor borrow: with any of them taken, the
  // preemptor must fit within its nominal quota (reclaiming is for getting nominal quota back).
  std::size_t strict_victims = 0;
  auto would_borrow = [&] {
    for (const auto& n : a.usage)
      if (tree->would_borrow(e.cq, n.fr, n.milli)) return true;
    return false;
  };
  auto fits = [&] {
    for (const auto& n : a.usage)
      if (n.milli > tree->available(e.cq, n.fr)) return false;
    return strict_victims == 0 || !would_borrow();
  };
  auto take = [&](std::size_t i, int sign) {
    const Entry& w = entries[c.list[i].id];
    tree->add_usage(w.cq, w.usage, -sign);
    if (c.list[i].other_queue && !c.list[i].lets_borrow)
      strict_victims = static_cast<std::size_t>(static_cast<int64_t>(strict_victims) + sign);
  };
  auto restore = [&](const std::vector<std::size_t>& list) {
    for (std::size_t i : list) take(i, -1);
  };
  // Greedy in candidate order until the workload fits; then, if it did not, again with only the
  // candidates that let it borrow (Kueue's borrowWithinCohort and own-queue heuristics). Work on
  // time for its deadline is taken only when nothing else makes room, and not while protected
  // work would do once its window ends.
  std::vector<std::size_t> taken;  // indices into cands
  bool any_strict = false, any_on_time = false;
  for (const auto& x : c.list) {
    any_strict = any_strict || (x.other_queue && !x.lets_borrow);
    any_on_time = any_on_time || x.on_time;
  }
  auto greedy = [&](bool with_on_time) {
    for (int round = 0; round < (any_strict ? 2 : 1); ++round) {
      for (std::size_t i = 0; i < c.list.size() && !fits(); ++i) {
        if (round == 1 && c.list[i].other_queue && !c.list[i].lets_borrow) continue;
        if (c.list[i].on_time && !with_on_time) continue;
        take(i, +1);
        taken.push_back(i);
      }
      if (fits()) return;
      restore(taken);
      taken.clear();
    }
  };
  greedy(false);
  if (taken.empty() && any_on_time) {
    if (c.unprotected_at) {
      *waits_for_protection = true;
      return {};
    }
    greedy(true);
  }
  if (taken.empty()) return {};
  // Minimal set: give back every victim the workload can do without, latest taken first.
  std::vector<std::size_t> victims;
  for (std::size_t k = taken.size(); k-- > 0;) {
    const std::size_t i = taken[k];
    if (k + 1 == taken.size()) {  // the last one taken made it fit: it stays a victim
      victims.push_back(i);
      continue;
    }
    take(i, -1);
    if (!fits()) {
      take(i, +1);
      victims.push_back(i);
    }
  }
  // Evicting other queues' work to borrow is borrowWithinCohort's doing, not reclaiming.
  if (!fair && would_borrow())
    for (std::size_t i : victims)
      if (c.list[i].other_queue) c.list[i].rule = "preemption/borrowWithinCohort";
  return victims;  // their usage stays out of the tree: evict_for puts it back
}

bool Scheduler::State::evict_for(uint32_t id, const Assignment& a,
                                 const std::vector<PreemptionCandidate>& list,
                                 std::vector<std::size_t> victims, Time now,
                                 std::vector<Decision>& out) {
  Entry& e = entries[id];
  const auto& cq = policy->cluster_queues[static_cast<std::size_t>(e.cq)];
  const auto& adm = policy->admission;
  // Placement with the victims gone: quota alone does not make room on nodes.
  for (std::size_t i : victims) {
    const Entry& w = entries[list[i].id];
    if (w.placement) nodes.commit(*w.placement, w.groups, -1);
  }
  Assignment after = assign(e, a.counts, node_fit());
  for (std::size_t i : victims) {
    const Entry& w = entries[list[i].id];
    if (w.placement) nodes.commit(*w.placement, w.groups, +1);
  }
  for (std::size_t i : victims) {
    const Entry& w = entries[list[i].id];
    tree->add_usage(w.cq, w.usage, +1);
  }
  if (!((after.mode == Assignment::Mode::kFit || after.mode == Assignment::Mode::kBorrow) &&
        placed(after))) {
    set_status(e, reason::kWaitingForNodes,
               "preempting would free quota, but the pods would still not fit on the nodes",
               "placement");
    return true;
  }
  if (adm.preemption_delay.count() > 0) {
    if (!e.preemption_wanted_since) e.preemption_wanted_since = now;
    const Time due = *e.preemption_wanted_since + adm.preemption_delay;
    if (now < due) {
      wakeups.emplace(due, id);
      set_status(e, reason::kWaitingForPreemptionDelay,
                 "would preempt " + std::to_string(victims.size()) +
                     " workload(s); waiting until the preemption delay ends so that a scale-out "
                     "can make room first",
                 "quota");
      return true;
    }
  }
  std::sort(victims.begin(), victims.end());
  for (std::size_t i : victims) {
    Entry& w = entries[list[i].id];
    w.state = EntryState::kEvicting;
    admitted_changed(w.cq);
    w.preemptor = id;
    w.evicted_by.push_back(e.info.key);
    e.victims.push_back(list[i].id);
    ++e.victims_in_flight;
    ++stats.preemptions;
    Decision d;
    d.kind = Decision::Kind::kPreempt;
    d.workload = w.info.key;
    d.cluster_queue = tree->cluster_queue_name(w.cq);
    d.rule = list[i].rule;
    d.preemptor = e.info.key;
    d.reason = "preempted to make room for " + e.info.namespace_ + "/" + e.info.name +
               " (priority " + std::to_string(e.priority) + ") in ClusterQueue " + cq.name +
               " by rule " + d.rule;
    set_status(w, reason::kEvicting, d.reason, "");
    out.push_back(std::move(d));
  }
  set_status(e, reason::kWaitingForPreemptedWorkloads,
             "preempting " + std::to_string(victims.size()) + " workload(s) to make room", "quota");
  return true;
}

bool Scheduler::State::preempt_for(uint32_t id, Assignment& a, Time now,
                                   std::vector<Decision>& out) {
  Entry& e = entries[id];
  // Workloads already evicting under the same quota free it soon: count it as free now, so that
  // a second preemptor does not evict more for room that is already coming (Kueue skips
  // overlapping preemptions within a cycle for the same reason).
  std::vector<uint32_t> in_flight;
  for (int c : tree->cluster_queues_under_root_of(e.cq)) {
    const auto& ids = victim_pool(c).evicting_ids;
    in_flight.insert(in_flight.end(), ids.begin(), ids.end());
  }
  auto shift_in_flight = [&](int sign) {
    for (uint32_t w_id : in_flight) {
      const Entry& w = entries[w_id];
      tree->add_usage(w.cq, w.usage, sign);
      if (w.placement) nodes.commit(*w.placement, w.groups, sign);
    }
  };
  struct Restore {
    std::function<void()> f;
    ~Restore() { f(); }
  } restore_in_flight{[&] { shift_in_flight(+1); }};
  shift_in_flight(-1);
  if (!in_flight.empty()) {
    const Assignment coming = assign(e, a.counts, node_fit());
    if ((coming.mode == Assignment::Mode::kFit || coming.mode == Assignment::Mode::kBorrow) &&
        placed(coming)) {
      set_status(e, reason::kWaitingForPreemptedWorkloads,
                 "waits for " + std::to_string(in_flight.size()) +
                     " preempted workload(s) to stop: the room they free is enough",
                 "quota");
      return true;
    }
  }

  PreemptionCandidates c = preemption_candidates(e, a, now);
  auto wake_later = [&] {
    if (c.unprotected_at) wakeups.emplace(*c.unprotected_at, id);
    if (c.deadline_kept_count > 0)
      a.message +=
          "; not preempting " + c.deadline_kept +
          (c.deadline_kept_count > 1 ? " and " + std::to_string(c.deadline_kept_count - 1) + " more"
                                     : std::string()) +
          ": it runs on time for its deadline";
  };
  bool waits_for_protection = false;
  std::vector<std::size_t> victims;
  if (!c.list.empty()) victims = choose_victims(e, a, c, &waits_for_protection);
  if (victims.empty()) {
    wake_later();
    if (waits_for_protection)
      a.message +=
          "; waits for recently admitted work to leave its protection rather than stop "
          "work that runs on time for its deadline";
    return false;
  }
  return evict_for(id, a, c.list, std::move(victims), now, out);
}

}  // namespace gpuaas::core::admission
