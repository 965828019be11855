// Placement: which Ready nodes of a flavor can take a gang of pods, chosen to keep GPU
// fragmentation low. Nodes are indexed per flavor by free GPUs, so a decision scores a bounded
// set of candidates instead of every node (docs/admission.md says what that approximates).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/admission/resources.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::base {
class ArchiveWriter;
class ArchiveReader;
}  // namespace gpuaas::base

namespace gpuaas::core::admission {

struct NodeInfo {
  std::string name;
  policy::LabelMap labels;
  std::vector<policy::Taint> taints;
  Amounts allocatable;  // by interned resource
  bool ready = false;
  bool schedulable = true;  // !spec.unschedulable
  // Used by pods that are not part of an admitted workload (daemon sets, unmanaged pods).
  Amounts used_by_others;
};

// Pods of one pod set, all alike.
struct PodGroup {
  int64_t count = 0;
  Amounts per_pod;                 // by interned resource; GPUs may be fractional (500m)
  policy::LabelMap node_selector;  // the workload's own, on top of the flavor's nodeLabels
  std::vector<policy::Toleration> tolerations;  // the workload's own
};

// GPU milli that the pods of a group take on one device of one of their nodes: what a release
// gives back, so that it restores the same devices.
struct DeviceShare {
  int32_t node = 0;  // index into PodGroupPlacement::nodes
  int32_t device = 0;
  int64_t milli = 0;
};

// Where the pods of one pod group go: node names with a pod count each.
struct PodGroupPlacement {
  std::vector<std::pair<std::string, int64_t>> nodes;
  std::vector<DeviceShare> devices;  // filled by fit(); empty: commit() picks devices itself
};
struct Placement {
  int flavor = -1;
  std::vector<PodGroupPlacement> groups;  // parallel to the request's pod groups
};

struct PlacementStats {
  uint64_t attempts = 0;
  uint64_t candidates_scored = 0;
  // Scored on top of the budget: nodes where the pod would leave GPUs stranded (node_fit.cpp).
  uint64_t stranding_scored = 0;
};

class NodeIndex {
 public:
  // `resources` interns resource names; `gpu_resource` is the resource fragmentation is about.
  NodeIndex(NameIndex& resources, std::string gpu_resource = "nvidia.com/gpu");
  ~NodeIndex();
  NodeIndex(NodeIndex&&) noexcept;
  NodeIndex& operator=(NodeIndex&&) noexcept;

  // The flavors placement knows, by index (QuotaTree's flavor order); again after a policy reload
  // (membership is recomputed). A node belongs to a flavor when it has all its nodeLabels; a pod
  // group may use it when it also has the group's node_selector and the flavor's tolerations plus
  // the group's tolerate the node's NoSchedule/NoExecute taints.
  void set_flavors(const std::vector<const policy::ResourceFlavor*>& flavors);
  void upsert(const NodeInfo& node);
  void remove(const std::string& name);

  // A placement for every pod group on the nodes of `flavor`, or nullopt when the gang does not
  // fit on the Ready nodes now. Scores at most `candidates` nodes per pod (best fit on GPUs first,
  // so whole free GPUs and whole free nodes are kept for larger requests); nodes where the pod
  // would strand GPUs (no CPU or memory left for another like it) are scored on top, up to 8 times
  // `candidates` nodes in all. Const, but it reuses scratch space inside: one caller at a time.
  std::optional<Placement> fit(int flavor, const std::vector<PodGroup>& groups,
                               int candidates) const;
  // Whether the gang could fit if the flavor's nodes were empty (tells "never" from "not now").
  // Counts nodes that are not Ready or cordoned too: they may come back.
  bool could_ever_fit(int flavor, const std::vector<PodGroup>& groups) const;
  // Reserves (+1) or releases (-1) what a placement takes.
  void commit(const Placement& placement, const std::vector<PodGroup>& groups, int sign);

  // Totals over the flavor's Ready, schedulable nodes: allocatable and free of a resource.
  int64_t allocatable(int flavor, int resource) const;
  int64_t free(int flavor, int resource) const;
  // GPU fragmentation of a flavor's nodes: the share of free GPUs (milli) that no request of
  // `gpus_per_pod_milli` can use (Weng et al., ATC '23, for one task size): all free GPUs of a
  // node where it does not fit, and where it fits the free parts of devices too small for it
  // (below the request if fractional, below a whole device otherwise). 0 when nothing is free.
  double fragmentation(int flavor, int64_t gpus_per_pod_milli) const;
  std::size_t node_count() const;
  const PlacementStats& stats() const { return stats_; }
  std::size_t bytes() const;  // memory held, for the benchmark

  // Snapshots (node_index_snapshot.cpp): node records with their ids, ranks and keys, free ids
  // and totals; the orderings are rebuilt from the keys the records hold, which is exact since
  // their keys are unique. load_state goes on an index whose flavors are set (set_flavors) as
  // when save_state ran, and replaces its nodes; on a failure it leaves the index alone.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  mutable PlacementStats stats_;
};

}  // namespace gpuaas::core::admission
