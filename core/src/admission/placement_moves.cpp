// An admitted workload's placement as binding reads it, and a pod that runs elsewhere than its
// placement said: the placement follows the pod, so the node index counts what pods really hold.
#include "gpuaas/admission/scheduler.hpp"
#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

std::optional<std::pair<std::string, Placement>> Scheduler::placement_of(
    const std::string& key) const {
  const auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return std::nullopt;
  const Entry& e = s.entries[id];
  if ((e.state != EntryState::kAdmitted && e.state != EntryState::kEvicting) || !e.placement ||
      e.place_flavor < 0)
    return std::nullopt;
  return std::make_pair(s.tree->flavor_name(e.place_flavor), *e.placement);
}

bool Scheduler::move_pod(const std::string& key, int pod_set, const std::string& from,
                         const std::string& to, Time /*now*/) {
  auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX || from == to) return false;
  Entry& e = s.entries[id];
  if ((e.state != EntryState::kAdmitted && e.state != EntryState::kEvicting) || !e.placement)
    return false;
  Placement& p = *e.placement;
  // The pod's own set when known, else the first set with a pod on `from`.
  int gi = -1;
  for (std::size_t g = 0; g < p.groups.size() && gi < 0; ++g) {
    if (pod_set >= 0 && static_cast<std::size_t>(pod_set) != g) continue;
    for (const auto& [node, count] : p.groups[g].nodes)
      if (node == from && count > 0) gi = static_cast<int>(g);
  }
  if (gi < 0) return false;
  s.nodes.commit(p, e.groups, -1);
  auto& gp = p.groups[static_cast<std::size_t>(gi)];
  for (auto it = gp.nodes.begin(); it != gp.nodes.end(); ++it) {
    if (it->first != from) continue;
    if (--it->second == 0) gp.nodes.erase(it);
    break;
  }
  bool added = false;
  for (auto& [node, count] : gp.nodes)
    if (node == to) added = (++count, true);
  if (!added) gp.nodes.emplace_back(to, 1);
  // The recorded devices named slots by index; the index picks devices again for this set.
  gp.devices.clear();
  s.nodes.commit(p, e.groups, +1);
  s.nodes_freed();
  return true;
}

}  // namespace gpuaas::core::admission
