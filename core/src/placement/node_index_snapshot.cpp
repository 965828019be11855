// NodeIndex in a snapshot. Node records are written with their ids (slots, free ids), name ranks
// and the keys they hold in the orderings; the orderings and the iterators into them are rebuilt
// from those keys. Keys are unique (rank, then device, breaks every tie), so the rebuilt sets are
// the same sets. Flavor totals are written as they are: they are sums kept in step, not
// recomputed. fit()'s scratch space and the records' fit() marks (epoch, visit) only matter
// within one call and are not written.
#include <set>
#include <string>
#include <unordered_set>

#include "gpuaas/admission/archive_fields.hpp"
#include "gpuaas/base/archive.hpp"
#include "node_index_impl.hpp"

namespace gpuaas::core::admission {
namespace {

bool partial(int32_t d) { return d > 0 && d < kDeviceMilli; }

// A field added to NodeRec must be written too (or this file must say why not).
#if GPUAAS_ARCHIVE_PINNED_LAYOUT
static_assert(sizeof(NodeRec) == 432, "NodeRec changed: update archive_record and this size");
static_assert(sizeof(FlavorIndex) == 344, "FlavorIndex changed: update NodeIndex::save_state");
#endif

template <typename A>
void archive_record(A& a, NodeRec& n) {
  a(n.name, n.labels);
  snapshot_detail::archive_taints(a, n.hard_taints);
  a(n.ready, n.schedulable, n.alloc, n.others, n.committed, n.free, n.empty, n.dev_others,
    n.dev_committed, n.dev_free, n.dev_empty);
  snapshot_detail::archive_each(a, n.flavors,
                                [](A& ar, NodeRec::Membership& m) { ar(m.flavor, m.clean); });
  a(n.rank, n.key.whole, n.key.free, n.cpu_key, n.key_dev, n.indexed_now, n.indexed_empty,
    n.changing);
}

// 128-bit totals as two 64-bit halves: the archive knows fixed-width arithmetic types only.
template <typename A>
void archive_totals(A& a, std::vector<Total>& v) {
  snapshot_detail::archive_each(a, v, [](A& ar, Total& t) {
    uint64_t lo = static_cast<uint64_t>(t), hi = static_cast<uint64_t>(t >> 64);
    ar(lo, hi);
    if constexpr (A::kLoading)
      t = (static_cast<Total>(static_cast<int64_t>(hi)) << 64) | static_cast<Total>(lo);
  });
}

// Whether a loaded record can be indexed and searched without reading out of range.
bool consistent(const NodeRec& n, std::size_t flavors) {
  const std::size_t len = n.alloc.size(), ndev = n.dev_others.size();
  if (n.others.size() != len || n.committed.size() != len || n.free.size() != len ||
      n.empty.size() != len || n.dev_committed.size() != ndev || n.dev_free.size() != ndev ||
      n.dev_empty.size() != ndev || n.changing)
    return false;
  for (const auto& m : n.flavors)
    if (m.flavor < 0 || static_cast<std::size_t>(m.flavor) >= flavors) return false;
  return !n.indexed_now || n.live();
}

}  // namespace

void NodeIndex::save_state(base::ArchiveWriter& w) const {
#if GPUAAS_ARCHIVE_PINNED_LAYOUT
  static_assert(sizeof(Impl) == 360, "NodeIndex::Impl changed: update save_state and load_state");
#endif
  const Impl& im = *impl_;
  w(stats_, im.free_ids, im.by_name);
  w.count(im.nodes.size());
  for (const auto& n : im.nodes) {
    w(n != nullptr);
    if (n) archive_record(w, *n);
  }
  w.count(im.flavors.size());
  for (const FlavorIndex& f : im.flavors) {
    archive_totals(w, const_cast<std::vector<Total>&>(f.alloc_total));
    archive_totals(w, const_cast<std::vector<Total>&>(f.free_total));
  }
}

void NodeIndex::load_state(base::ArchiveReader& r) {
  Impl& im = *impl_;
  PlacementStats stats;
  std::vector<int> free_ids;
  std::unordered_map<std::string, int> by_name;
  std::vector<std::unique_ptr<NodeRec>> nodes;
  r(stats, free_ids, by_name);
  const std::size_t n_nodes = r.count();
  for (std::size_t i = 0; i < n_nodes && r.ok(); ++i) {
    bool present = false;
    r(present);
    auto& slot = nodes.emplace_back();
    if (!present) continue;
    slot = std::make_unique<NodeRec>();
    archive_record(r, *slot);
  }
  const std::size_t n_flavors = r.count();
  if (r.ok() && n_flavors != im.flavors.size()) {
    r.fail("the snapshot's node index has " + std::to_string(n_flavors) + " flavors, the policy " +
           std::to_string(im.flavors.size()));
  }
  std::vector<std::vector<Total>> alloc_totals(n_flavors), free_totals(n_flavors);
  for (std::size_t f = 0; f < n_flavors && r.ok(); ++f) {
    archive_totals(r, alloc_totals[f]);
    archive_totals(r, free_totals[f]);
  }
  if (!r.ok()) return;

  // Ids, names and ranks must agree, or the orderings could not be kept in step.
  bool ok = true;
  std::set<std::string_view> names;
  std::unordered_set<uint64_t> ranks;
  std::size_t live = 0;
  for (std::size_t id = 0; id < nodes.size() && ok; ++id) {
    if (!nodes[id]) continue;
    const NodeRec& n = *nodes[id];
    auto it = by_name.find(n.name);
    ok = consistent(n, im.flavors.size()) && it != by_name.end() &&
         it->second == static_cast<int>(id) && names.insert(n.name).second &&
         ranks.insert(n.rank).second;
    ++live;
  }
  ok = ok && live == by_name.size() && live + free_ids.size() == nodes.size();
  for (int id : free_ids)
    ok = ok && id >= 0 && static_cast<std::size_t>(id) < nodes.size() &&
         !nodes[static_cast<std::size_t>(id)];
  if (!ok) {
    r.fail("the snapshot's node index is inconsistent");
    return;
  }

  for (FlavorIndex& f : im.flavors) {
    f.now.clear();
    f.now_partial.clear();
    f.empty.clear();
    f.empty_partial.clear();
  }
  im.name_order.clear();
  im.nodes = std::move(nodes);
  im.free_ids = std::move(free_ids);
  im.by_name = std::move(by_name);
  stats_ = stats;
  for (std::size_t f = 0; f < im.flavors.size(); ++f) {
    im.flavors[f].alloc_total = std::move(alloc_totals[f]);
    im.flavors[f].free_total = std::move(free_totals[f]);
  }
  for (std::size_t id = 0; id < im.nodes.size(); ++id) {
    if (!im.nodes[id]) continue;
    NodeRec& n = *im.nodes[id];
    const int i = static_cast<int>(id);
    im.name_order.emplace(n.name, i);
    if (n.indexed_empty) {
      n.indexed_empty = false;
      im.index_empty(i);  // keys from dev_empty, as unindex_empty() will compute them
    }
    if (!n.indexed_now) continue;
    // The keys the record says it holds (index_now would take new ones and count totals again).
    for (NodeRec::Membership& m : n.flavors) {
      FlavorIndex& f = im.flavors[static_cast<std::size_t>(m.flavor)];
      m.now = f.now.insert({n.key.whole, n.key.free, n.cpu_key, n.rank, i, m.clean}).first;
      m.devs.assign(n.key_dev.size(), {});
      for (std::size_t d = 0; d < n.key_dev.size(); ++d)
        if (partial(n.key_dev[d]))
          m.devs[d] =
              f.now_partial.insert({n.key_dev[d], static_cast<int32_t>(d), n.rank, i, m.clean})
                  .first;
    }
  }
}

}  // namespace gpuaas::core::admission
