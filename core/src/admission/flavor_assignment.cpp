// Flavor assignment, as Kueue's flavor assigner: per resource group the workload needs, flavors
// are tried in order and each is rated Fit, Borrow, Preempt or NoFit; flavorFungibility says
// whether to stop at the first that borrows or preempts. The group that holds the GPUs (else the
// first one needed) also decides placement: quota alone does not admit a gang that cannot run.
#include <algorithm>

#include "gpuaas/base/quantity.hpp"
#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

// Why flavors did not fit, kept across the flavors and groups tried, for the status.
struct FitNotes {
  bool saw_waiting = false, saw_placement = false, saw_exceeds = false;
  std::string waiting_msg, placement_msg, exceeds_msg, selector_msg;
};

namespace {

using Mode = Assignment::Mode;

bool selector_conflicts(const policy::LabelMap& selector, const policy::LabelMap& flavor_labels) {
  for (const auto& [k, v] : selector) {
    auto it = flavor_labels.find(k);
    if (it != flavor_labels.end() && it->second != v) return true;
  }
  return false;
}

bool preemption_enabled(const policy::ClusterQueue& cq) {
  const auto& p = cq.preemption;
  return p.within_cluster_queue != policy::WithinClusterQueue::kNever ||
         p.reclaim_within_cohort != policy::ReclaimWithinCohort::kNever ||
         p.borrow_within_cohort != policy::BorrowWithinCohort::kNever;
}

// Total request per resource, for the pod counts asked.
Amounts total_request(const WorkloadInfo& w, const std::vector<int64_t>& counts) {
  Amounts total;
  for (std::size_t i = 0; i < w.pod_sets.size(); ++i) {
    for (const auto& amt : w.pod_sets[i].per_pod) {
      if (amt.milli <= 0) continue;
      auto it = std::find_if(total.begin(), total.end(),
                             [&](const Amount& t) { return t.resource == amt.resource; });
      if (it == total.end()) it = total.insert(total.end(), Amount{amt.resource, 0});
      it->milli += amt.milli * counts[i];
    }
  }
  return total;
}

int64_t request_of(const Amounts& total, int r) {
  for (const auto& t : total)
    if (t.resource == r) return t.milli;
  return 0;
}

// The status of a workload no flavor fits: the most telling reason seen.
void explain_no_fit(Assignment& a, const FitNotes& n, const std::string& cq_name) {
  a.mode = Mode::kNoFit;
  a.holder = "quota";
  if (n.saw_waiting) {
    a.reason = reason::kWaitingForQuota;
    a.message = n.waiting_msg;
  } else if (n.saw_placement) {
    a.reason = reason::kWaitingForNodes;
    a.message = n.placement_msg;
    a.holder = "placement";
  } else if (n.saw_exceeds) {
    a.reason = reason::kExceedsMaxQuota;
    a.message = n.exceeds_msg;
  } else {
    a.reason = reason::kNoMatchingFlavor;
    a.message = n.selector_msg.empty()
                    ? "no flavor of ClusterQueue " + cq_name + " exists for what it asks"
                    : n.selector_msg;
  }
}

}  // namespace

// How flavor f rates on quota for the group's resources: Fit, Borrow, Preempt or NoFit.
Assignment::Mode Scheduler::State::quota_mode(const Entry& e, int f, const std::string& flavor,
                                              const std::vector<int>& in_group,
                                              const Amounts& total, bool can_preempt,
                                              FitNotes& notes) const {
  const std::string& cq_name = policy->cluster_queues[static_cast<std::size_t>(e.cq)].name;
  Mode m = Mode::kFit;
  for (int r : in_group) {
    const int64_t need = request_of(total, r);
    if (need <= 0) continue;
    const int fr = tree->fr_index(f, r);
    if (fr < 0) {
      notes.saw_exceeds = true;
      notes.exceeds_msg = "flavor " + flavor + " has no quota for " + resources.name(r);
      return Mode::kNoFit;
    }
    const int64_t potential = tree->potential_available(e.cq, fr);
    if (need > potential) {
      notes.saw_exceeds = true;
      notes.exceeds_msg = "needs " + format_milli(need) + " " + resources.name(r) + " of flavor " +
                          flavor + ", more than ClusterQueue " + cq_name + " can ever get (" +
                          format_milli(potential) + ")";
      return Mode::kNoFit;
    }
    const int64_t avail = tree->available(e.cq, fr);
    if (need > avail) {
      notes.saw_waiting = true;
      // No free amount in the message: a retry that quota rules out keeps this status
      // without rebuilding it, so the sentence must stay true while the workload waits.
      notes.waiting_msg = "needs " + format_milli(need) + " " + resources.name(r) + " of flavor " +
                          flavor + ", more than ClusterQueue " + cq_name + " has free now";
      m = std::min(m, can_preempt ? Mode::kPreempt : Mode::kNoFit);
    } else if (tree->would_borrow(e.cq, fr, need)) {
      m = std::min(m, Mode::kBorrow);
    }
  }
  return m;
}

// The pods, constrained by the flavors the other resource groups chose (their node labels and
// tolerations).
std::vector<PodGroup> Scheduler::State::with_group_flavors(const Assignment& a) const {
  std::vector<PodGroup> pods = a.groups;
  for (int chosen : a.group_flavors) {
    if (chosen < 0) continue;
    const auto* of = policy->flavor(tree->flavor_name(chosen));
    if (!of) continue;
    for (auto& pgp : pods) {
      for (const auto& [k, v] : of->node_labels) pgp.node_selector[k] = v;
      pgp.tolerations.insert(pgp.tolerations.end(), of->tolerations.begin(), of->tolerations.end());
    }
  }
  return pods;
}

Assignment Scheduler::State::assign(const Entry& e, const std::vector<int64_t>& counts_in,
                                    bool placement, bool force,
                                    const std::vector<std::string>* prefer) const {
  Assignment a;
  const auto& cq = policy->cluster_queues[static_cast<std::size_t>(e.cq)];
  const std::string& cq_name = cq.name;
  a.counts.reserve(e.info.pod_sets.size());
  for (std::size_t i = 0; i < e.info.pod_sets.size(); ++i)
    a.counts.push_back(counts_in.empty() ? e.info.pod_sets[i].count : counts_in[i]);

  const Amounts total = total_request(e.info, a.counts);
  const auto& groups = cq.resource_groups;
  const auto& in_group = group_resources[static_cast<std::size_t>(e.cq)];  // interned, per group
  std::vector<bool> needed(groups.size(), false);
  for (const auto& t : total) {
    std::size_t g = 0;
    for (; g < groups.size(); ++g)
      if (std::find(in_group[g].begin(), in_group[g].end(), t.resource) != in_group[g].end()) break;
    if (g == groups.size()) {
      a.reason = reason::kInadmissible;
      a.message = "ClusterQueue " + cq_name + " has no quota for " + resources.name(t.resource);
      a.holder = "quota";
      return a;
    }
    needed[g] = true;
  }
  int pg = -1;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!needed[g]) continue;
    if (pg < 0) pg = static_cast<int>(g);
    if (gpu >= 0 && std::find(in_group[g].begin(), in_group[g].end(), gpu) != in_group[g].end())
      pg = static_cast<int>(g);
  }
  a.group_flavors.assign(groups.size(), -1);
  a.groups.reserve(e.info.pod_sets.size());
  for (std::size_t i = 0; i < e.info.pod_sets.size(); ++i) {
    const auto& ps = e.info.pod_sets[i];
    a.groups.push_back(PodGroup{a.counts[i], ps.per_pod, ps.node_selector, ps.tolerations});
  }
  if (pg < 0) {  // asks for nothing: admitted as it is
    a.mode = Mode::kFit;
    if (placement) a.placement = Placement{};
    return a;
  }
  auto request = [&](int r) { return request_of(total, r); };

  Mode overall = Mode::kFit;
  std::optional<Placement> chosen_placement;
  FitNotes notes;
  std::vector<std::size_t> order;
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (needed[g] && static_cast<int>(g) != pg) order.push_back(g);
  order.push_back(static_cast<std::size_t>(pg));
  const bool can_preempt = preemption_enabled(cq);

  for (std::size_t g : order) {
    const auto& group = groups[g];
    const std::string* preferred = nullptr;
    if (prefer)
      for (const auto& fq : group.flavors)
        for (const auto& n : *prefer)
          if (fq.flavor == n) preferred = &n;
    int best = -1;
    Mode best_mode = Mode::kNoFit;
    std::optional<Placement> best_placement;
    for (const auto& fq : group.flavors) {
      if (preferred && fq.flavor != *preferred) continue;
      const int f = tree->flavor_index(fq.flavor);
      if (f < 0) continue;
      const auto* rf = policy->flavor(fq.flavor);
      bool conflict = false;
      for (const auto& ps : e.info.pod_sets)
        conflict = conflict || (rf && selector_conflicts(ps.node_selector, rf->node_labels));
      if (conflict && !force) {
        notes.selector_msg = "the workload's nodeSelector excludes flavor " + fq.flavor;
        continue;
      }
      Mode m =
          force ? Mode::kFit : quota_mode(e, f, fq.flavor, in_group[g], total, can_preempt, notes);
      std::optional<Placement> p;
      if (static_cast<int>(g) == pg && placement && (m == Mode::kFit || m == Mode::kBorrow)) {
        std::vector<PodGroup> pods = with_group_flavors(a);
        p = nodes.fit(f, pods, policy->admission.placement_candidates);
        if (!p) {
          notes.saw_placement = true;
          notes.placement_msg = nodes.could_ever_fit(f, pods)
                                    ? "quota is free but the pods do not fit on the Ready nodes of "
                                      "flavor " +
                                          fq.flavor + " now"
                                    : "the pods can never fit on the nodes of flavor " + fq.flavor +
                                          " (too large for any node, or no node matches)";
          m = Mode::kNoFit;
        } else {
          a.groups = std::move(pods);
        }
      }
      if (m != Mode::kNoFit && (best < 0 || m > best_mode)) {
        best = f;
        best_mode = m;
        best_placement = std::move(p);
      }
      if (force) {
        best = f;
        best_mode = Mode::kFit;
        break;
      }
      if (m == Mode::kFit) break;
      if (m == Mode::kBorrow &&
          cq.flavor_fungibility.when_can_borrow == policy::FungibilityChoice::kMayStopSearch)
        break;
      if (m == Mode::kPreempt &&
          cq.flavor_fungibility.when_can_preempt == policy::FungibilityChoice::kMayStopSearch)
        break;
    }
    if (best < 0 || best_mode == Mode::kNoFit) {
      explain_no_fit(a, notes, cq_name);
      return a;
    }
    a.group_flavors[g] = best;
    overall = std::min(overall, best_mode);
    if (static_cast<int>(g) == pg) chosen_placement = std::move(best_placement);
    for (int r : in_group[g]) {
      const int64_t need = request(r);
      if (need <= 0) continue;
      const int fr = tree->fr_index(best, r);
      if (fr >= 0) a.usage.push_back({fr, need});
    }
  }
  a.place_flavor = a.group_flavors[static_cast<std::size_t>(pg)];
  a.mode = overall;
  if (overall == Mode::kPreempt) {
    a.reason = reason::kWaitingForQuota;
    a.message = notes.waiting_msg;
    a.holder = "quota";
  }
  if (placement && (overall == Mode::kFit || overall == Mode::kBorrow)) {
    a.placement = std::move(chosen_placement);
    if (a.placement) a.placement->flavor = a.place_flavor;
  }
  return a;
}

Assignment Scheduler::State::assign_with_partial(const Entry& e) const {
  Assignment full = assign(e, {}, node_fit());
  if ((full.mode == Mode::kFit || full.mode == Mode::kBorrow) && placed(full)) return full;
  bool partial = false;
  for (const auto& ps : e.info.pod_sets)
    partial = partial || (ps.min_count > 0 && ps.min_count < ps.count);
  if (!partial || full.reason == reason::kInadmissible) return full;
  // Largest admissible counts between minCount and count (Kueue's partial admission): the pod
  // sets that allow it shrink together, in 64 steps.
  auto counts_at = [&](int k) {
    std::vector<int64_t> c;
    for (const auto& ps : e.info.pod_sets) {
      if (ps.min_count > 0 && ps.min_count < ps.count)
        c.push_back(ps.min_count + (ps.count - ps.min_count) * k / 64);
      else
        c.push_back(ps.count);
    }
    return c;
  };
  int lo = 0, hi = 63;
  std::optional<Assignment> best;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    Assignment a = assign(e, counts_at(mid), node_fit());
    if ((a.mode == Mode::kFit || a.mode == Mode::kBorrow) && placed(a)) {
      best = std::move(a);
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best ? std::move(*best) : full;
}

}  // namespace gpuaas::core::admission
