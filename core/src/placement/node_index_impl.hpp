// Private to NodeIndex: node records and the per-flavor orderings that fit() scans.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <memory_resource>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuaas/admission/node_index.hpp"

namespace gpuaas::core::admission {

__extension__ using Total = __int128;

inline constexpr int32_t kDeviceMilli = 1000;  // one GPU device

// A node's GPUs summed up: whole free devices and free milli (negative devices count as 0).
struct GpuSummary {
  int32_t whole = 0;
  int64_t free = 0;
  bool operator==(const GpuSummary&) const = default;
};
inline GpuSummary summarize(const std::vector<int32_t>& dev) {
  GpuSummary s;
  for (int32_t d : dev) {
    if (d >= kDeviceMilli) ++s.whole;
    if (d > 0) s.free += d;
  }
  return s;
}

// Nodes of a flavor ordered by (whole free GPUs, free GPU milli, free CPU, name): the best-fit
// order for requests of whole GPUs, and for pods without GPUs (GPU-less or GPU-full nodes first).
// CPU last but one lets a scan jump, within nodes alike in GPUs, to the first with CPU enough:
// nodes whose GPUs are taken often have their CPU taken too, and pods without GPUs would
// otherwise look at each of them.
struct NodeKey {
  int32_t whole = 0;
  int64_t gpu_free = 0;
  int64_t cpu = 0;
  uint64_t rank = 0;  // 0 sorts first: lower_bound sentinels
  int32_t id = 0;
  bool clean = false;  // not compared
};
struct NodeKeyLess {
  bool operator()(const NodeKey& a, const NodeKey& b) const {
    if (a.whole != b.whole) return a.whole < b.whole;
    if (a.gpu_free != b.gpu_free) return a.gpu_free < b.gpu_free;
    if (a.cpu != b.cpu) return a.cpu < b.cpu;
    return a.rank < b.rank;
  }
};

// Partially used GPU devices of a flavor ordered by (free milli, node name, device): the best-fit
// order for fractional requests.
struct DevKey {
  int32_t free = 0;
  int32_t device = 0;
  uint64_t rank = 0;
  int32_t id = 0;
  bool clean = false;  // not compared
};
struct DevKeyLess {
  bool operator()(const DevKey& a, const DevKey& b) const {
    if (a.free != b.free) return a.free < b.free;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.device < b.device;
  }
};

using NodeOrder = std::pmr::set<NodeKey, NodeKeyLess>;
using DevOrder = std::pmr::set<DevKey, DevKeyLess>;

// One node as placement sees it. Resource vectors are dense by interned resource, all the same
// length; device vectors hold milli per GPU device.
struct NodeRec {
  struct Membership {
    int flavor = 0;
    bool clean = false;  // the flavor's tolerations alone tolerate every hard taint
    // Its entries in the flavor's current orderings while `indexed_now` (devs: where key_dev
    // is partial), so that moving a key erases without a search.
    NodeOrder::iterator now;
    std::vector<DevOrder::iterator> devs;
  };

  std::string name;
  policy::LabelMap labels;
  std::vector<policy::Taint> hard_taints;  // NoSchedule and NoExecute: the ones that keep pods off
  bool ready = false;
  bool schedulable = true;
  std::vector<int64_t> alloc, others, committed;
  std::vector<int64_t> free;   // alloc - others - committed
  std::vector<int64_t> empty;  // alloc - others: what is free when no admitted pod runs here
  std::vector<int32_t> dev_others, dev_committed;
  std::vector<int32_t> dev_free, dev_empty;  // derived like free and empty
  std::vector<Membership> flavors;
  // Its place in name order: the orderings break ties by it, as integers, so that keeping them
  // never compares strings (see Impl::assign_rank).
  uint64_t rank = 0;
  // The keys it has in its flavors' current orderings, while `indexed_now`.
  GpuSummary key;
  int64_t cpu_key = 0;
  std::vector<int32_t> key_dev;
  bool indexed_now = false;
  bool indexed_empty = false;  // in the empty-node orderings (keys from dev_empty)
  bool changing = false;       // commit(): totals taken out, keys not yet updated

  // fit() bookkeeping (fit() is const and not reentrant): `epoch` marks a node copied to scratch
  // in the current call, `visit` a node already looked at for the current pod.
  mutable uint64_t epoch = 0;
  mutable uint64_t visit = 0;

  bool live() const { return ready && schedulable; }
};

// One flavor: its node labels and tolerations (copied: the policy may be reloaded), orderings of
// its Ready, schedulable nodes ("now") and of all its nodes as if empty, and totals.
struct FlavorIndex {
  explicit FlavorIndex(std::pmr::memory_resource* mr)
      : now(mr), now_partial(mr), empty(mr), empty_partial(mr) {}
  policy::LabelMap node_labels;
  std::vector<policy::Toleration> tolerations;
  NodeOrder now;
  DevOrder now_partial;
  NodeOrder empty;
  DevOrder empty_partial;
  // Over live nodes, by resource; 128-bit because memory in milli-bytes overflows int64 past
  // about 8,000 nodes of 1Ti (the API clamps what it returns).
  std::vector<Total> alloc_total, free_total;
};

// A node's resources and devices as one pod sees them: a live node, its empty state or a copy.
struct NodeView {
  const int64_t* free = nullptr;
  int32_t nres = 0;
  const int32_t* dev = nullptr;
  int32_t ndev = 0;
  int64_t res(int r) const { return r < nres ? free[r] : 0; }
};

// A node's state changed by the pods placed on it so far in one fit() call.
struct Scratch {
  int id = -1;
  bool clean = false;
  std::vector<int64_t> free;
  std::vector<int32_t> dev;
  int group = -1;  // the pod group `slot` refers to
  int32_t slot = -1;
  NodeView view() const {
    return {free.data(), static_cast<int32_t>(free.size()), dev.data(),
            static_cast<int32_t>(dev.size())};
  }
};

// Placement score, compared in field order, lower is better: see score_pod() in node_fit.cpp.
struct FitScore {
  int64_t device_leftover = 0;
  int64_t stranded = 0;
  int64_t pack = 0;
  int64_t free_after = 0;
  int64_t cpu_after = 0;
  auto operator<=>(const FitScore&) const = default;
};

// What one pod asks of a node.
struct PodShape {
  const PodGroup* group = nullptr;
  int64_t gpu = 0;    // milli per pod
  int64_t cpu = 0;    // milli per pod
  int32_t whole = 0;  // whole devices it takes (gpu >= 1000), else 0
  bool fractional() const { return gpu > 0 && gpu < kDeviceMilli; }
};

struct NodeIndex::Impl {
  Impl(NameIndex& r, int gpu, int cpu) : resources(r), gpu_res(gpu), cpu_res(cpu) {}

  NameIndex& resources;
  const int gpu_res;                            // the GPU resource: counted per device
  const int cpu_res;                            // "cpu": part of NodeKey
  std::pmr::unsynchronized_pool_resource pool;  // the orderings' nodes: no malloc per re-key
  std::vector<std::unique_ptr<NodeRec>> nodes;  // by id; null: a free id
  std::vector<int> free_ids;
  std::unordered_map<std::string, int> by_name;
  std::map<std::string_view, int> name_order;  // ids by name (views of NodeRec::name)
  std::vector<FlavorIndex> flavors;

  // Reused across fit() calls so that a decision allocates only its result.
  mutable std::vector<Scratch> scratch;
  mutable std::size_t n_scratch = 0;
  mutable std::vector<int> open;  // scratch entries still able to take the current group's pod
  mutable uint64_t epoch = 0;
  mutable uint64_t visit = 0;
  std::vector<int> slot_ids;  // commit(): node ids of a group's slots

  // node_index.cpp: node records.
  int find(const std::string& name) const;
  void resize_resources(NodeRec& n, std::size_t len) const;
  void derive(NodeRec& n) const;
  void compute_membership(NodeRec& n) const;
  void apply_device_fallback(NodeRec& n, int64_t gpu, int64_t pods, int sign) const;

  // node_orders.cpp: orderings and totals in step with the records.
  void assign_rank(int id);
  void drop_rank(int id);
  int64_t free_cpu(const NodeRec& n) const;
  int64_t empty_cpu(const NodeRec& n) const;
  void index_now(int id);
  void unindex_now(int id);
  void index_empty(int id);
  void unindex_empty(int id);
  void add_totals(const NodeRec& n, int sign);
  void begin_change(int id);  // before a commit changes a node: totals out
  void end_change(int id);    // after: totals back in, changed keys moved

  // node_fit.cpp: the search.
  bool admits(const NodeRec& n, bool clean, const FlavorIndex& f, const PodGroup& g) const;
  bool place(int flavor, const std::vector<PodGroup>& groups, int candidates, bool empty_mode,
             Placement* out, PlacementStats* stats) const;
  PodShape shape_of(const PodGroup& g) const;
};

}  // namespace gpuaas::core::admission
