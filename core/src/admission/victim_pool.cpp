// Victims, gathered once per pass and cohort rather than per attempt: each ClusterQueue's
// admitted work in the order preemption takes it (lower priority first, most recently admitted
// first) with its usage summed by priority, what is already being evicted, and per cohort the
// order across its ClusterQueues. A pool is gathered again when its ClusterQueue's admitted
// work changed (admitted_changed: admission, release, eviction, lending, a workload's priority
// resolved again) and after a policy reload; the order only when a victim search needs it.
#include <algorithm>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {
namespace {

void add_into(FrAmounts& into, const FrAmounts& add) {
  for (const auto& x : add) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const FlavorResourceAmount& y) { return y.fr == x.fr; });
    if (it == into.end())
      into.push_back(x);
    else
      it->milli += x.milli;
  }
}

}  // namespace

bool Scheduler::State::runs_on_time(const Entry& w) {
  return w.info.deadline && w.duration.count() > 0 &&
         w.admitted_at + w.duration <= *w.info.deadline;
}

// Preemption's order within a queue: lower priority, then most recently admitted, then key.
bool Scheduler::State::taken_before(uint32_t x, uint32_t y) const {
  const Entry& a = entries[x];
  const Entry& b = entries[y];
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
  return a.info.key < b.info.key;
}

void Scheduler::State::admitted_changed(int cq) {
  if (cq >= 0 && static_cast<std::size_t>(cq) < victim_pools.size())
    ++victim_pools[static_cast<std::size_t>(cq)].changes;
}

void Scheduler::State::victims_changed_everywhere() {
  victim_pools.clear();
  cohort_orders.clear();
}

const VictimPool& Scheduler::State::victim_pool(int cq) {
  if (victim_pools.size() != cqs.size()) victim_pools.assign(cqs.size(), VictimPool{});
  VictimPool& pool = victim_pools[static_cast<std::size_t>(cq)];
  if (pool.built_at == pool.changes) return pool;
  pool.built_at = pool.changes;
  pool.by_priority.clear();
  pool.evicting.clear();
  pool.evicting_ids.clear();
  for (uint32_t id : cqs[static_cast<std::size_t>(cq)].admitted) {
    const Entry& w = entries[id];
    if (w.lent) continue;  // holds nothing in the tree
    if (w.state == EntryState::kEvicting) {
      add_into(pool.evicting, w.usage);
      pool.evicting_ids.push_back(id);
      continue;
    }
    if (w.state != EntryState::kAdmitted) continue;
    auto it = std::lower_bound(
        pool.by_priority.begin(), pool.by_priority.end(), w.priority,
        [](const std::pair<int32_t, FrAmounts>& x, int32_t p) { return x.first < p; });
    if (it == pool.by_priority.end() || it->first != w.priority)
      it = pool.by_priority.insert(it, {w.priority, {}});
    add_into(it->second, w.usage);
  }
  std::sort(pool.evicting_ids.begin(), pool.evicting_ids.end());
  return pool;
}

const std::vector<uint32_t>& Scheduler::State::victim_order(int cq) {
  victim_pool(cq);
  VictimPool& pool = victim_pools[static_cast<std::size_t>(cq)];
  if (pool.order_built_at == pool.changes) return pool.order;
  pool.order_built_at = pool.changes;
  pool.order.clear();
  for (uint32_t id : cqs[static_cast<std::size_t>(cq)].admitted) {
    const Entry& w = entries[id];
    if (!w.lent && w.state == EntryState::kAdmitted) pool.order.push_back(id);
  }
  std::sort(pool.order.begin(), pool.order.end(),
            [&](uint32_t x, uint32_t y) { return taken_before(x, y); });
  return pool.order;
}

const std::vector<uint32_t>& Scheduler::State::cohort_order(int cq) {
  const auto& group = tree->cluster_queues_under_root_of(cq);
  const int root = tree->root_of(cq);
  if (cohort_orders.size() != static_cast<std::size_t>(tree->cohort_count()))
    cohort_orders.assign(static_cast<std::size_t>(tree->cohort_count()), CohortOrder{});
  static const std::vector<uint32_t> kNone;
  if (root < 0) return kNone;
  uint64_t signature = 0;
  for (int q : group) {
    victim_pool(q);
    signature += victim_pools[static_cast<std::size_t>(q)].changes;
  }
  CohortOrder& o = cohort_orders[static_cast<std::size_t>(root)];
  if (o.signature == signature) return o.order;
  o.signature = signature;
  o.order.clear();
  for (int q : group) {
    const auto& own = victim_order(q);
    o.order.insert(o.order.end(), own.begin(), own.end());
  }
  // Work on time for its deadline last (taken only when nothing else makes room).
  std::sort(o.order.begin(), o.order.end(), [&](uint32_t x, uint32_t y) {
    const bool tx = runs_on_time(entries[x]), ty = runs_on_time(entries[y]);
    if (tx != ty) return ty;
    return taken_before(x, y);
  });
  return o.order;
}

}  // namespace gpuaas::core::admission
