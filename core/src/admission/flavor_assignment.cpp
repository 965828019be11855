// Flavor assignment, as Kueue's flavor assigner: per resource group the workload needs, flavors
// are tried in order and each is rated Fit, Borrow, Preempt or NoFit; flavorFungibility says
// whether to stop at the first that borrows or preempts. The group that holds the GPUs (else the
// first one needed) also decides placement: quota alone does not admit a gang that cannot run.
#include <algorithm>

#include "gpuaas/base/quantity.hpp"
#include "scheduler_state.hpp"

namespace gpuaas::admission {
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

}  // namespace

Assignment Scheduler::State::assign(const Entry& e, const std::vector<int64_t>& counts_in,
                                    bool placement, bool force,
                                    const std::vector<std::string>* prefer) const {
  Assignment a;
  const auto& cq = policy->cluster_queues[static_cast<std::size_t>(e.cq)];
  const std::string& cq_name = cq.name;
  a.counts.reserve(e.info.pod_sets.size());
  for (std::size_t i = 0; i < e.info.pod_sets.size(); ++i)
    a.counts.push_back(counts_in.empty() ? e.info.pod_sets[i].count : counts_in[i]);

  // Total request per resource.
  Amounts total;
  for (std::size_t i = 0; i < e.info.pod_sets.size(); ++i) {
    for (const auto& amt : e.info.pod_sets[i].per_pod) {
      if (amt.milli <= 0) continue;
      auto it = std::find_if(total.begin(), total.end(),
                             [&](const Amount& t) { return t.resource == amt.resource; });
      if (it == total.end()) it = total.insert(total.end(), Amount{amt.resource, 0});
      it->milli += amt.milli * a.counts[i];
    }
  }
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
  auto request = [&](int r) {
    for (const auto& t : total)
      if (t.resource == r) return t.milli;
    return int64_t{0};
  };

  Mode overall = Mode::kFit;
  std::optional<Placement> chosen_placement;
  bool saw_waiting = false, saw_placement = false, saw_exceeds = false;
  std::string waiting_msg, placement_msg, exceeds_msg, selector_msg;
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
        selector_msg = "the workload's nodeSelector excludes flavor " + fq.flavor;
        continue;
      }
      Mode m = Mode::kFit;
      for (int r : in_group[g]) {
        const int64_t need = request(r);
        if (need <= 0) continue;
        const int fr = tree->fr_index(f, r);
        if (force) continue;
        if (fr < 0) {
          m = Mode::kNoFit;
          saw_exceeds = true;
          exceeds_msg = "flavor " + fq.flavor + " has no quota for " + resources.name(r);
          break;
        }
        const int64_t potential = tree->potential_available(e.cq, fr);
        if (need > potential) {
          m = Mode::kNoFit;
          saw_exceeds = true;
          exceeds_msg = "needs " + format_milli(need) + " " + resources.name(r) + " of flavor " +
                        fq.flavor + ", more than ClusterQueue " + cq_name + " can ever get (" +
                        format_milli(potential) + ")";
          break;
        }
        const int64_t avail = tree->available(e.cq, fr);
        if (need > avail) {
          saw_waiting = true;
          // No free amount in the message: a retry that quota rules out keeps this status
          // without rebuilding it, so the sentence must stay true while the workload waits.
          waiting_msg = "needs " + format_milli(need) + " " + resources.name(r) + " of flavor " +
                        fq.flavor + ", more than ClusterQueue " + cq_name + " has free now";
          m = std::min(m, can_preempt ? Mode::kPreempt : Mode::kNoFit);
        } else if (tree->would_borrow(e.cq, fr, need)) {
          m = std::min(m, Mode::kBorrow);
        }
      }
      std::optional<Placement> p;
      if (static_cast<int>(g) == pg && placement && (m == Mode::kFit || m == Mode::kBorrow)) {
        // The other groups' flavors constrain the same pods.
        std::vector<PodGroup> pods = a.groups;
        for (std::size_t og = 0; og < groups.size(); ++og) {
          if (a.group_flavors[og] < 0) continue;
          const auto* of = policy->flavor(tree->flavor_name(a.group_flavors[og]));
          if (!of) continue;
          for (auto& pgp : pods) {
            for (const auto& [k, v] : of->node_labels) pgp.node_selector[k] = v;
            pgp.tolerations.insert(pgp.tolerations.end(), of->tolerations.begin(),
                                   of->tolerations.end());
          }
        }
        p = nodes.fit(f, pods, policy->admission.placement_candidates);
        if (!p) {
          saw_placement = true;
          placement_msg = nodes.could_ever_fit(f, pods)
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
      a.mode = Mode::kNoFit;
      if (saw_waiting) {
        a.reason = reason::kWaitingForQuota;
        a.message = waiting_msg;
        a.holder = "quota";
      } else if (saw_placement) {
        a.reason = reason::kWaitingForNodes;
        a.message = placement_msg;
        a.holder = "placement";
      } else if (saw_exceeds) {
        a.reason = reason::kExceedsMaxQuota;
        a.message = exceeds_msg;
        a.holder = "quota";
      } else {
        a.reason = reason::kNoMatchingFlavor;
        a.message = selector_msg.empty()
                        ? "no flavor of ClusterQueue " + cq_name + " exists for what it asks"
                        : selector_msg;
        a.holder = "quota";
      }
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
    a.message = waiting_msg;
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

}  // namespace gpuaas::admission
