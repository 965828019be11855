// The scheduler seen from the nodes: which admitted workloads hold which nodes (and until when),
// and which pending ones wait for nodes rather than quota. Node scale-out sizes pools from it;
// scale-in drains through evict().
#include <algorithm>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

std::vector<NodeDemand> Scheduler::node_demand() const {
  const auto& s = *s_;
  std::vector<NodeDemand> out;
  if (s.gpu < 0) return out;
  auto gpu_of = [&](const PodSetRequest& ps) {
    for (const auto& a : ps.per_pod)
      if (a.resource == s.gpu) return a.milli;
    return int64_t{0};
  };
  auto pods_of = [&](const Entry& e, const std::vector<int64_t>& counts) {
    std::vector<NodeDemand::Pods> pods;
    for (std::size_t i = 0; i < e.info.pod_sets.size(); ++i) {
      const auto& ps = e.info.pod_sets[i];
      const int64_t gpu = gpu_of(ps);
      const int64_t n = i < counts.size() ? counts[i] : ps.count;
      if (gpu > 0 && n > 0) pods.push_back({n, gpu});
    }
    return pods;
  };
  auto base = [&](const Entry& e) {
    NodeDemand d;
    d.workload = e.info.key;
    d.priority = e.priority;
    d.deadline = e.info.deadline;
    d.duration = e.duration;
    return d;
  };
  for (std::size_t c = 0; c < s.cqs.size(); ++c) {
    const auto& q = s.cqs[c];
    for (uint32_t id : q.admitted) {
      const Entry& e = s.entries[id];
      NodeDemand d = base(e);
      d.pods = pods_of(e, e.counts);
      if (d.pods.empty()) continue;
      if (e.place_flavor >= 0) d.flavor = s.tree->flavor_name(e.place_flavor);
      d.parked = e.parked || e.lent;  // no pods yet when woken and waiting for its loan
      d.evicting = e.state == EntryState::kEvicting;
      d.since = e.admitted_at;
      if (e.placement)
        for (std::size_t g = 0; g < e.placement->groups.size(); ++g) {
          int64_t gpu = 0;
          if (g < e.groups.size())
            for (const auto& a : e.groups[g].per_pod)
              if (a.resource == s.gpu) gpu = a.milli;
          for (const auto& [node, n] : e.placement->groups[g].nodes)
            if (gpu > 0) d.nodes.emplace_back(node, n * gpu);
        }
      out.push_back(std::move(d));
    }
  }
  // Pending ones held by placement, merged across ClusterQueues in queue order.
  std::vector<std::pair<QueueKey, uint32_t>> waiting;
  for (int c : s.placement_waiting) {
    const auto& q = s.cqs[static_cast<std::size_t>(c)];
    for (const auto& [need, keys] : q.nodes_blocked)
      for (const QueueKey& k : keys) waiting.emplace_back(k, k.entry);
  }
  std::sort(waiting.begin(), waiting.end());
  int64_t position = 0;
  for (const auto& [k, id] : waiting) {
    const Entry& e = s.entries[id];
    if (e.state != EntryState::kPending || e.reason != reason::kWaitingForNodes) continue;
    const Assignment a = s.assign(e, {}, false);
    if ((a.mode != Assignment::Mode::kFit && a.mode != Assignment::Mode::kBorrow) ||
        a.place_flavor < 0)
      continue;
    NodeDemand d = base(e);
    d.pending = true;
    d.flavor = s.tree->flavor_name(a.place_flavor);
    d.since = e.queued_at;
    d.position = position++;
    d.pods = pods_of(e, a.counts);
    int64_t need = 0;
    for (const auto& p : d.pods) need += p.count * p.gpu_milli;
    for (const auto& cr : s.covered[static_cast<std::size_t>(e.cq)])
      if (cr.resource == s.gpu)
        for (int fr : cr.frs)
          if (s.tree->available(e.cq, fr) >= need)
            d.flavors.push_back(s.tree->flavor_name(s.tree->fr_flavor(fr)));
    if (d.flavors.empty()) d.flavors.push_back(d.flavor);
    if (!d.pods.empty()) out.push_back(std::move(d));
  }
  return out;
}

bool Scheduler::evicting(const std::string& key) const {
  const uint32_t id = s_->entry_of(key);
  return id != UINT32_MAX && s_->entries[id].state == EntryState::kEvicting;
}

std::optional<Decision> Scheduler::evict(const std::string& key, const std::string& rule,
                                         const std::string& why, Time now) {
  auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return std::nullopt;
  Entry& e = s.entries[id];
  if (e.state != EntryState::kAdmitted || e.parked) return std::nullopt;
  e.state = EntryState::kEvicting;
  s.admitted_changed(e.cq);
  ++s.stats.preemptions;
  Decision d;
  d.kind = Decision::Kind::kPreempt;
  d.workload = e.info.key;
  d.cluster_queue = s.tree->cluster_queue_name(e.cq);
  d.rule = rule;
  d.reason = why;
  s.set_status(e, reason::kEvicting, why, "");
  (void)now;
  return d;
}

}  // namespace gpuaas::core::admission
