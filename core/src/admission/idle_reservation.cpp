// Idle reclaim's side of the ledger: a workload scaled to zero keeps its quota reservation
// (parked), optionally lent to others meanwhile as preemptible capacity, and takes it back when
// it wakes (once what ran on the loan has stopped). Kueue releases the quota of a suspended
// workload; keeping it is what lets an idle service or Ray cluster come back at once.
#include <algorithm>
#include <iterator>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

bool Scheduler::park(const std::string& key, bool lend, Time now) {
  auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return false;
  Entry& e = s.entries[id];
  if (e.state != EntryState::kAdmitted) return false;
  if (e.parked) return true;
  e.parked = true;
  e.parked_at = now;
  e.lent = lend;
  s.admitted_changed(e.cq);
  if (lend) {
    // Out of the tree and the node index: others may take it until the owner wakes.
    s.tree->add_usage(e.cq, e.usage, -1);
    if (e.placement) s.nodes.commit(*e.placement, e.groups, -1);
    e.placement.reset();
    s.capacity_changed(e.cq);
    s.nodes_freed();
  }
  s.set_status(e, reason::kScaledToZero,
               lend ? "scaled to zero; its quota stays reserved and is lent meanwhile as "
                      "preemptible capacity"
                    : "scaled to zero; its quota and nodes stay reserved",
               "");
  return true;
}

bool Scheduler::parked(const std::string& key) const {
  const uint32_t id = s_->entry_of(key);
  return id != UINT32_MAX && s_->entries[id].parked;
}

bool Scheduler::running(const std::string& key) const {
  const uint32_t id = s_->entry_of(key);
  if (id == UINT32_MAX) return false;
  const Entry& e = s_->entries[id];
  return e.state == EntryState::kAdmitted && !e.parked && !e.lent;
}

bool Scheduler::waking(const std::string& key) const {
  const uint32_t id = s_->entry_of(key);
  return id != UINT32_MAX && s_->entries[id].state == EntryState::kAdmitted &&
         !s_->entries[id].parked && s_->entries[id].lent;
}

std::vector<Decision> Scheduler::unpark(const std::string& key, Time now) {
  auto& s = *s_;
  std::vector<Decision> out;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX || !s.entries[id].parked) return out;
  Entry& e = s.entries[id];
  e.parked = false;
  if (!e.lent) {
    s.set_status(e, reason::kAdmitted, "woke from zero with its reservation", "");
    return out;
  }
  s.waking.insert(id);
  s.take_back_loan(id, now, out);
  return out;
}

void Scheduler::State::finish_wakes(Time now, std::vector<Decision>& out) {
  for (auto it = waking.begin(); it != waking.end();) {
    const uint32_t id = *it++;
    const Entry& e = entries[id];
    if (!e.live || e.state != EntryState::kAdmitted || e.parked || !e.lent) {
      waking.erase(id);
      continue;
    }
    bool borrows = false;
    for (const auto& u : e.usage) borrows = borrows || tree->would_borrow(e.cq, u.fr, u.milli);
    if (!take_back_loan(id, now, out)) continue;
    Decision d = admit_decision(e, "reclaim/wake", borrows);
    d.reason = "woke from zero: its lent quota is back in ClusterQueue " + d.cluster_queue;
    out.push_back(std::move(d));
  }
}

bool Scheduler::State::take_back_loan(uint32_t id, Time now, std::vector<Decision>& out) {
  Entry& e = entries[id];
  auto fits = [&] {
    for (const auto& u : e.usage)
      if (tree->available(e.cq, u.fr) < u.milli) return false;
    return true;
  };
  if (fits()) {
    // Quota is reserved usage, as in Kueue: the owner takes it back only once nothing else
    // holds it, so no queue or cohort is ever above what its quotas allow.
    tree->add_usage(e.cq, e.usage, +1);
    e.lent = false;
    admitted_changed(e.cq);
    e.victims.clear();
    e.victims_in_flight = 0;
    waking.erase(id);
    // Its nodes: where it fits now; else its pods wait for room as any admitted pods do.
    if (e.place_flavor >= 0 && !e.groups.empty()) {
      e.placement = nodes.fit(e.place_flavor, e.groups, policy->admission.placement_candidates);
      if (e.placement) nodes.commit(*e.placement, e.groups, +1);
    }
    set_status(e, reason::kAdmitted, "woke from zero with its reservation", "");
    return true;
  }
  if (e.victims_in_flight > 0) return false;  // those stopping for it are not gone yet
  // Workloads already stopping give their quota back anyway: count them as gone.
  std::vector<uint32_t> in_flight, candidates;
  for (int c : tree->cluster_queues_under_root_of(e.cq)) {
    for (uint32_t w : cqs[static_cast<std::size_t>(c)].admitted) {
      const Entry& x = entries[w];
      if (x.state == EntryState::kEvicting) {
        if (!x.lent) in_flight.push_back(w);
      } else if (w != id && !x.parked && !x.lent && x.admitted_at >= e.parked_at) {
        candidates.push_back(w);  // admitted onto what was lent
      }
    }
  }
  for (uint32_t w : in_flight) tree->add_usage(entries[w].cq, entries[w].usage, -1);
  // Least important first, then the newest: what came last onto the loan goes first.
  std::sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
    const Entry& x = entries[a];
    const Entry& y = entries[b];
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.admitted_at != y.admitted_at) return x.admitted_at > y.admitted_at;
    return x.seq > y.seq;
  });
  std::vector<uint32_t> victims;
  for (uint32_t w : candidates) {
    if (fits()) break;
    tree->add_usage(entries[w].cq, entries[w].usage, -1);
    victims.push_back(w);
  }
  // A minimal set, as Kueue's: keep, most important first, any victim the owner fits without.
  for (auto it = victims.rbegin(); it != victims.rend();) {
    tree->add_usage(entries[*it].cq, entries[*it].usage, +1);
    if (fits()) {
      it = decltype(it)(victims.erase(std::next(it).base()));
    } else {
      tree->add_usage(entries[*it].cq, entries[*it].usage, -1);
      ++it;
    }
  }
  for (uint32_t w : victims) tree->add_usage(entries[w].cq, entries[w].usage, +1);
  for (uint32_t w : in_flight) tree->add_usage(entries[w].cq, entries[w].usage, +1);
  for (uint32_t w : victims) {
    Entry& v = entries[w];
    v.state = EntryState::kEvicting;
    admitted_changed(v.cq);
    v.evicted_by.push_back(e.info.key);
    v.preemptor = id;
    e.victims.push_back(w);
    ++e.victims_in_flight;
    ++stats.preemptions;
    Decision d;
    d.kind = Decision::Kind::kPreempt;
    d.workload = v.info.key;
    d.cluster_queue = tree->cluster_queue_name(v.cq);
    d.rule = "reclaim/lend";
    d.preemptor = e.info.key;
    d.reason = "ran on quota lent by " + e.info.namespace_ + "/" + e.info.name +
               " while it was at zero; it woke and takes its reservation back";
    set_status(v, reason::kEvicting, d.reason, "");
    out.push_back(std::move(d));
  }
  if (e.victims_in_flight > 0) {
    set_status(e, reason::kWaitingForPreemptedWorkloads,
               "woke from zero; " + std::to_string(e.victims_in_flight) +
                   " workload(s) that ran on its lent quota are stopping to give it back",
               "quota");
  } else {
    set_status(e, reason::kWaitingForQuota,
               "woke from zero; its lent quota is still in use (by workloads already stopping, "
               "or admitted before it was lent): it takes it back as that quota frees",
               "quota");
  }
  (void)now;
  return false;
}

}  // namespace gpuaas::core::admission
