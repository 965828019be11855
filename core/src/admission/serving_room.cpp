// How many replicas of a serving workload its ClusterQueue's quota allows: the serving stage caps
// KServe's maxReplicas with it, so the autoscaler never runs a service beyond its quota.
#include <algorithm>
#include <limits>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

std::optional<ServingRoom> Scheduler::serving_room(const std::string& key,
                                                   const std::string& pod_set) const {
  const auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return std::nullopt;
  const Entry& e = s.entries[id];
  if (e.state != EntryState::kAdmitted || e.parked || e.lent || e.cq < 0) return std::nullopt;
  std::size_t set = 0;
  for (std::size_t i = 0; i < e.info.pod_sets.size(); ++i)
    if (!pod_set.empty() && e.info.pod_sets[i].name == pod_set) set = i;
  if (set >= e.info.pod_sets.size()) return std::nullopt;
  const PodSetRequest& ps = e.info.pod_sets[set];
  ServingRoom room;
  room.reserved = set < e.counts.size() ? e.counts[set] : ps.count;
  if (e.place_flavor >= 0) room.flavor = s.tree->flavor_name(e.place_flavor);
  int64_t extra = std::numeric_limits<int64_t>::max();
  const bool fair = s.policy && s.policy->admission.fair_sharing;
  for (const auto& u : e.usage) {
    const int resource = s.tree->fr_resource(u.fr);
    int64_t per_pod = 0;
    for (const auto& a : ps.per_pod)
      if (a.resource == resource) per_pod = a.milli;
    if (per_pod <= 0) continue;
    if (resource == s.gpu) room.gpu_milli = per_pod;
    int64_t free = s.tree->available(e.cq, u.fr);
    if (fair) free = std::min(free, s.tree->nominal(e.cq, u.fr) - s.tree->usage(e.cq, u.fr));
    const int64_t pods = std::max<int64_t>(0, free) / per_pod;
    if (pods < extra) {
      extra = pods;
      room.limited_by = s.resources.name(resource) + " of flavor " +
                        s.tree->flavor_name(s.tree->fr_flavor(u.fr)) + " in ClusterQueue " +
                        s.tree->cluster_queue_name(e.cq);
    }
  }
  // A replica that takes nothing the queue counts: quota does not limit it.
  room.max_replicas = extra == std::numeric_limits<int64_t>::max() ? -1 : room.reserved + extra;
  return room;
}

}  // namespace gpuaas::core::admission
