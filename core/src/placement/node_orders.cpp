// NodeIndex's orderings and totals, kept in step with the node records: the keys each node has in
// its flavors' orderings, and the name ranks that break ties in them.
#include <algorithm>
#include <iterator>

#include "node_index_impl.hpp"

namespace gpuaas::core::admission {
namespace {

constexpr uint64_t kRankStep = uint64_t{1} << 40;  // evenly spread: room for 2^23 nodes
constexpr uint64_t kRankMax = uint64_t{1} << 63;

bool partial(int32_t d) { return d > 0 && d < kDeviceMilli; }

}  // namespace

// Ranks follow name order with gaps, so that a new node fits between its neighbours; when no gap
// is left every node is renumbered and re-keyed, which sorted or random arrivals make rare.
void NodeIndex::Impl::assign_rank(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  const auto it = name_order.emplace(n.name, id).first;
  const uint64_t lo =
      it == name_order.begin() ? 0 : nodes[static_cast<std::size_t>(std::prev(it)->second)]->rank;
  const auto next = std::next(it);
  const uint64_t hi =
      next == name_order.end() ? kRankMax : nodes[static_cast<std::size_t>(next->second)]->rank;
  if (hi - lo > kRankStep) {
    n.rank = next == name_order.end() ? lo + kRankStep : lo + (hi - lo) / 2;
    return;
  }
  if (hi - lo >= 2) {
    n.rank = lo + (hi - lo) / 2;
    return;
  }
  std::vector<std::pair<int, std::pair<bool, bool>>> was;  // id, (indexed now, indexed empty)
  for (const auto& [name, other] : name_order) {
    NodeRec& o = *nodes[static_cast<std::size_t>(other)];
    was.push_back({other, {o.indexed_now, o.indexed_empty}});
    unindex_now(other);
    unindex_empty(other);
  }
  uint64_t rank = 0;
  for (const auto& [name, other] : name_order)
    nodes[static_cast<std::size_t>(other)]->rank = rank += kRankStep;
  for (const auto& [other, flags] : was) {
    if (flags.second) index_empty(other);
    if (flags.first) index_now(other);
  }
}

void NodeIndex::Impl::drop_rank(int id) {
  name_order.erase(nodes[static_cast<std::size_t>(id)]->name);
}

int64_t NodeIndex::Impl::free_cpu(const NodeRec& n) const {
  const auto r = static_cast<std::size_t>(cpu_res);
  return r < n.free.size() ? n.free[r] : 0;
}

int64_t NodeIndex::Impl::empty_cpu(const NodeRec& n) const {
  const auto r = static_cast<std::size_t>(cpu_res);
  return r < n.empty.size() ? n.empty[r] : 0;
}

void NodeIndex::Impl::add_totals(const NodeRec& n, int sign) {
  for (const NodeRec::Membership& m : n.flavors) {
    FlavorIndex& f = flavors[static_cast<std::size_t>(m.flavor)];
    if (f.alloc_total.size() < n.alloc.size()) {
      f.alloc_total.resize(n.alloc.size(), 0);
      f.free_total.resize(n.alloc.size(), 0);
    }
    for (std::size_t r = 0; r < n.alloc.size(); ++r) {
      f.alloc_total[r] += sign * n.alloc[r];
      f.free_total[r] += sign * std::max<int64_t>(n.free[r], 0);
    }
  }
}

// Current orderings: keys from the node's derived state when indexed, remembered with their
// entries so that a change erases without a search.
void NodeIndex::Impl::index_now(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  if (n.indexed_now || !n.live()) return;
  n.key = summarize(n.dev_free);
  n.cpu_key = free_cpu(n);
  n.key_dev = n.dev_free;
  for (NodeRec::Membership& m : n.flavors) {
    FlavorIndex& f = flavors[static_cast<std::size_t>(m.flavor)];
    m.now = f.now.insert({n.key.whole, n.key.free, n.cpu_key, n.rank, id, m.clean}).first;
    m.devs.resize(n.key_dev.size());
    for (std::size_t d = 0; d < n.key_dev.size(); ++d) {
      if (partial(n.key_dev[d]))
        m.devs[d] =
            f.now_partial.insert({n.key_dev[d], static_cast<int32_t>(d), n.rank, id, m.clean})
                .first;
    }
  }
  add_totals(n, +1);
  n.indexed_now = true;
}

void NodeIndex::Impl::unindex_now(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  if (!n.indexed_now) return;
  for (NodeRec::Membership& m : n.flavors) {
    FlavorIndex& f = flavors[static_cast<std::size_t>(m.flavor)];
    f.now.erase(m.now);
    for (std::size_t d = 0; d < n.key_dev.size(); ++d)
      if (partial(n.key_dev[d])) f.now_partial.erase(m.devs[d]);
  }
  add_totals(n, -1);
  n.indexed_now = false;
}

void NodeIndex::Impl::begin_change(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  if (!n.indexed_now || n.changing) return;
  add_totals(n, -1);
  n.changing = true;
}

// Moves only the keys that changed: a pod without GPUs leaves the device keys alone.
void NodeIndex::Impl::end_change(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  if (!n.changing) return;
  n.changing = false;
  add_totals(n, +1);
  const GpuSummary key = summarize(n.dev_free);
  const int64_t cpu = free_cpu(n);
  const std::size_t ndev = std::max(n.key_dev.size(), n.dev_free.size());
  for (NodeRec::Membership& m : n.flavors) {
    FlavorIndex& f = flavors[static_cast<std::size_t>(m.flavor)];
    if (!(key == n.key) || cpu != n.cpu_key) {
      f.now.erase(m.now);
      m.now = f.now.insert({key.whole, key.free, cpu, n.rank, id, m.clean}).first;
    }
    m.devs.resize(ndev);
    for (std::size_t d = 0; d < ndev; ++d) {
      const int32_t was = d < n.key_dev.size() ? n.key_dev[d] : 0;
      const int32_t is = d < n.dev_free.size() ? n.dev_free[d] : 0;
      if (was == is) continue;
      if (partial(was)) f.now_partial.erase(m.devs[d]);
      if (partial(is))
        m.devs[d] = f.now_partial.insert({is, static_cast<int32_t>(d), n.rank, id, m.clean}).first;
    }
  }
  n.key = key;
  n.cpu_key = cpu;
  n.key_dev = n.dev_free;
}

// Empty-node orderings: they change with upsert() only, so keys come from dev_empty as it is.
void NodeIndex::Impl::index_empty(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  if (n.indexed_empty) return;
  const GpuSummary g = summarize(n.dev_empty);
  const int64_t cpu = empty_cpu(n);
  for (const NodeRec::Membership& m : n.flavors) {
    FlavorIndex& f = flavors[static_cast<std::size_t>(m.flavor)];
    f.empty.insert({g.whole, g.free, cpu, n.rank, id, m.clean});
    for (std::size_t d = 0; d < n.dev_empty.size(); ++d) {
      if (partial(n.dev_empty[d]))
        f.empty_partial.insert({n.dev_empty[d], static_cast<int32_t>(d), n.rank, id, m.clean});
    }
  }
  n.indexed_empty = true;
}

void NodeIndex::Impl::unindex_empty(int id) {
  NodeRec& n = *nodes[static_cast<std::size_t>(id)];
  if (!n.indexed_empty) return;
  const GpuSummary g = summarize(n.dev_empty);
  const int64_t cpu = empty_cpu(n);
  for (const NodeRec::Membership& m : n.flavors) {
    FlavorIndex& f = flavors[static_cast<std::size_t>(m.flavor)];
    f.empty.erase({g.whole, g.free, cpu, n.rank, id, m.clean});
    for (std::size_t d = 0; d < n.dev_empty.size(); ++d) {
      if (partial(n.dev_empty[d]))
        f.empty_partial.erase({n.dev_empty[d], static_cast<int32_t>(d), n.rank, id, m.clean});
    }
  }
  n.indexed_empty = false;
}

}  // namespace gpuaas::core::admission
