// The scheduler's self-checks (invariants the randomized tests assert after every step) and its
// memory estimate.
#include "gpuaas/admission/scheduler.hpp"

#include <algorithm>
#include <climits>
#include <queue>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

bool Scheduler::check_invariants(std::string* why) const {
  // Usage is reserved quota, evicting workloads included (they hold it until seen stopped).
  if (!s_->tree->check_invariants(why)) return false;
  for (int c = 0; c < static_cast<int>(s_->cqs.size()); ++c) {
    for (int fr = 0; fr < s_->tree->fr_count(); ++fr) {
      int64_t sum = 0;
      for (uint32_t id : s_->cqs[static_cast<std::size_t>(c)].admitted)
        if (!s_->entries[id].lent)
          for (const auto& u : s_->entries[id].usage)
            if (u.fr == fr) sum += u.milli;
      if (sum != s_->tree->usage(c, fr)) {
        if (why)
          *why = "usage of " + s_->tree->cluster_queue_name(c) + " disagrees with its workloads";
        return false;
      }
    }
  }
  for (int f = 0; f < s_->tree->flavor_count(); ++f) {
    for (int r = 0; r < s_->resources.size(); ++r) {
      if (s_->nodes.free(f, r) < 0) {
        if (why)
          *why = "nodes of flavor " + s_->tree->flavor_name(f) + " overcommitted on " +
                 s_->resources.name(r);
        return false;
      }
    }
  }
  return true;
}

std::size_t Scheduler::bytes() const {
  std::size_t b = sizeof(State) + s_->nodes.bytes();
  b += s_->entries.capacity() * sizeof(Entry);
  for (const auto& e : s_->entries) {
    b += e.info.key.capacity() + e.info.name.capacity() + e.info.namespace_.capacity() +
         e.local_queue.capacity() + e.message.capacity();
    for (const auto& p : e.info.pod_sets) b += sizeof(p) + p.per_pod.capacity() * sizeof(Amount);
    b += e.usage.capacity() * sizeof(FlavorResourceAmount);
    b += e.groups.capacity() * sizeof(PodGroup);
    if (e.placement)
      for (const auto& g : e.placement->groups) b += g.nodes.capacity() * 48;
  }
  b += s_->by_key.size() * 64;
  for (const auto& q : s_->cqs) b += (q.pending.size() + q.fresh.size()) * (sizeof(QueueKey) + 32);
  return b;
}

}  // namespace gpuaas::core::admission
