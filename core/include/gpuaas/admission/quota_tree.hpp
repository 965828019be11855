// Quota as Kueue accounts it: ClusterQueues are leaves of a forest of Cohorts; each node holds
// nominal quota per (flavor, resource), lends up to its lendingLimit to its parent and borrows
// from it up to its borrowingLimit. The arithmetic follows Kueue's hierarchical cohorts
// (pkg/cache resource_node): a node's subtree quota is its own nominal plus what its children
// lend; usage above a child's guaranteed (non-lendable) quota counts in the parent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuaas/admission/resources.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::admission {

class QuotaTree {
 public:
  // `resources` interns resource names; the tree adds those the policy names.
  QuotaTree(const policy::PolicySet& set, NameIndex& resources);

  int cluster_queue_count() const;
  int cluster_queue_index(const std::string& name) const;  // -1 when unknown
  const std::string& cluster_queue_name(int cq) const;
  // Index of the root cohort above a ClusterQueue, or -1 when it has no cohort. ClusterQueues
  // with the same root share quota; anything freed under a root may let any of them admit.
  int root_of(int cq) const;
  // ClusterQueues under the same root cohort (just cq itself when it has none).
  const std::vector<int>& cluster_queues_under_root_of(int cq) const;

  int flavor_count() const;
  int flavor_index(const std::string& flavor) const;  // -1 when unknown
  const std::string& flavor_name(int flavor) const;
  // -1 when the pair has no quota anywhere in the tree.
  int fr_index(int flavor, int resource) const;
  int fr_count() const;
  int fr_flavor(int fr) const;
  int fr_resource(int fr) const;

  // Per ClusterQueue, per (flavor, resource): quota figures.
  int64_t nominal(int cq, int fr) const;
  int64_t usage(int cq, int fr) const;
  // How much more the ClusterQueue may take of fr now: its unused guaranteed quota plus what its
  // ancestors can lend, capped by borrowingLimits on the way up (Kueue's available()).
  int64_t available(int cq, int fr) const;
  // The same with no usage anywhere but the ClusterQueue's own: the most it could ever take
  // (Kueue's potentialAvailable), to tell "never fits" (ExceedsMaxQuota) from "not now".
  int64_t potential_available(int cq, int fr) const;
  // Whether adding `milli` of fr would take the ClusterQueue above its nominal quota.
  bool would_borrow(int cq, int fr, int64_t milli) const;
  // Whether the ClusterQueue uses more than its nominal quota of anything.
  bool is_borrowing(int cq) const;

  // Admits (+1) or releases (-1) usage of a ClusterQueue; propagates to its cohorts.
  void add_usage(int cq, const FrAmounts& amounts, int sign);

  // Kueue's fair sharing: the ClusterQueue's dominant resource share (0..., per mille, divided
  // by its weight) if `extra` were added to its usage; 0 without a cohort or when not borrowing.
  int64_t dominant_resource_share(int cq, const FrAmounts& extra = {}) const;

  // Lending limits are respected: what a ClusterQueue lends is at most its lendingLimit. For the
  // property tests: true when every node's usage stays within what it may take.
  bool check_invariants(std::string* why = nullptr) const;

 private:
  struct Node;
  std::vector<Node> nodes_;  // ClusterQueues first (index = cq), then cohorts
  // Implementation detail sized by the .cpp.
  struct Impl;
  std::vector<int> dummy_;
};

}  // namespace gpuaas::admission
