// Quota as Kueue accounts it: ClusterQueues are leaves of a forest of Cohorts; each node holds
// nominal quota per (flavor, resource), lends up to its lendingLimit to its parent and borrows
// from it up to its borrowingLimit. The arithmetic follows Kueue's hierarchical cohorts
// (pkg/cache resource_node): a node's subtree quota is its own nominal plus what its children
// lend; usage above a child's guaranteed (non-lendable) quota counts in the parent.
#pragma once

#include <cstddef>
#include <cstdint>
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

class QuotaTree {
 public:
  // `resources` interns resource names; the tree adds those the policy names.
  QuotaTree(const policy::PolicySet& set, NameIndex& resources);

  int cluster_queue_count() const;
  int cluster_queue_index(const std::string& name) const;  // -1 when unknown
  const std::string& cluster_queue_name(int cq) const;
  // Index (see cohort_name) of the root cohort above a ClusterQueue, or -1 when it has no
  // cohort. ClusterQueues with the same root share quota; anything freed under a root may let
  // any of them admit.
  int root_of(int cq) const;
  // ClusterQueues under the same root cohort, ascending (just cq itself when it has none).
  const std::vector<int>& cluster_queues_under_root_of(int cq) const;
  // Cohorts: PolicySet::cohorts in order, then any named only by a reference.
  int cohort_count() const;
  const std::string& cohort_name(int cohort) const;

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
  // The ClusterQueue's borrowingLimit and lendingLimit of fr; unset when it has none.
  std::optional<int64_t> borrowing_limit(int cq, int fr) const;
  std::optional<int64_t> lending_limit(int cq, int fr) const;
  // How much more the ClusterQueue may take of fr now: its unused guaranteed quota plus what its
  // ancestors can lend, capped by borrowingLimits on the way up (Kueue's available()). Not
  // clamped: negative when usage exceeds quota (a new policy shrank it under admitted
  // workloads); callers compare `request <= available`. A ClusterQueue whose resourceGroups do
  // not name fr gets at most 0 of it: Kueue lends only what a ClusterQueue lists (even at 0).
  int64_t available(int cq, int fr) const;
  // The most the ClusterQueue could take of fr if nothing at all were in use, its own usage
  // included (Kueue's potentialAvailable): `request > potential_available` means it never fits
  // (ExceedsMaxQuota), whatever is released or preempted.
  int64_t potential_available(int cq, int fr) const;
  // Whether the ClusterQueue's resourceGroups name fr (with any nominal quota, even 0).
  bool covers(int cq, int fr) const;
  // Whether adding `milli` of fr would take the ClusterQueue above its nominal quota.
  bool would_borrow(int cq, int fr, int64_t milli) const;
  // Whether the ClusterQueue uses more than its nominal quota of anything.
  bool is_borrowing(int cq) const;

  // Admits (+1) or releases (-1) usage of a ClusterQueue; propagates to its cohorts.
  void add_usage(int cq, const FrAmounts& amounts, int sign);

  // Kueue's fair sharing: the ClusterQueue's dominant resource share (0..., per mille, divided
  // by its weight, rounded up) if `extra` (may be negative) were added to its usage; 0 without
  // a cohort or when not borrowing; INT64_MAX when it borrows with weight 0.
  int64_t dominant_resource_share(int cq, const FrAmounts& extra = {}) const;
  // The same unrounded (+infinity for weight 0 when borrowing): Kueue orders and picks
  // preemption targets by this value, so two shares that round alike still compare.
  double precise_dominant_resource_share(int cq, const FrAmounts& extra = {}) const;

  // For the property tests: true when every node's usage stays within what it may take (its
  // subtree quota plus borrowingLimit; a root's, its subtree quota), no node lends its parent
  // more than its lendingLimit, every ClusterQueue can still take its unused guaranteed quota,
  // and cohort usage matches a recount from the ClusterQueues. False, by design, once usage
  // exceeds quota (a shrunk policy under admitted workloads).
  bool check_invariants(std::string* why = nullptr) const;

  // Snapshots (quota_tree_snapshot.cpp): the whole tree as it is, usage and structure, so that a
  // tree loaded over one built from the same policy is the same tree whatever resources were
  // interned when each was built. load_state fails the reader when the snapshot's tree is not
  // one of the same policy (other ClusterQueues, cohorts or flavors) and then leaves the tree.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  static constexpr int64_t kNoLimit = INT64_MAX;
  // Building (quota_tree_build.cpp), in the constructor's order.
  std::vector<const policy::Cohort*> link_nodes(const policy::PolicySet& set);
  std::vector<int> node_depths() const;  // a cohort cycle throws
  void sum_subtrees(const std::vector<int>& depth, int cohorts);
  void index_cluster_queues(const policy::PolicySet& set, int cohorts);
  // Per (node, fr): the figures available() reads at each level on the way to the root.
  struct Cell {
    int64_t usage = 0;       // ClusterQueue: its own; Cohort: children's above their guarantees
    int64_t guaranteed = 0;  // what a lendingLimit keeps from the parent
    int64_t subtree = 0;     // own nominal plus what the children lend
    int64_t cap = kNoLimit;  // subtree + borrowingLimit: the most the node may use
    template <typename A>
    friend void archive_fields(A& a, Cell& c) {
      a(c.usage, c.guaranteed, c.subtree, c.cap);
    }
  };
  // Per (node, fr): what the policy fixed.
  struct Quota {
    int64_t nominal = 0;
    int64_t borrowing_limit = kNoLimit;
    int64_t lending_limit = kNoLimit;
    int64_t potential = 0;  // potentialAvailable, fixed since it ignores usage
    bool covered = false;   // named by the node's resourceGroups
    template <typename A>
    friend void archive_fields(A& a, Quota& q) {
      a(q.nominal, q.borrowing_limit, q.lending_limit, q.potential, q.covered);
    }
  };
  struct Share {
    bool borrowing = false;
    double ratio = 0;  // unweighted, per mille of what the parent can lend
  };

  std::size_t at(int node, int fr) const {
    return static_cast<std::size_t>(node) * static_cast<std::size_t>(fr_count_) +
           static_cast<std::size_t>(fr);
  }
  Share share(int cq, const FrAmounts& extra) const;
  template <typename A>
  void archive(A& a);
  std::string node_name(int node) const;
  std::string fr_name(int fr) const;

  // Nodes: ClusterQueues first (node = cq), then cohorts (node = cq_count + cohort).
  int cq_count_ = 0;
  int fr_count_ = 0;
  int resource_count_ = 0;  // resources interned when built; later ones have no quota
  NameIndex cq_names_;
  NameIndex cohort_names_;
  NameIndex flavor_names_;
  std::vector<std::string> resource_names_;  // for messages
  std::vector<int> parent_;                  // per node; -1 at a root
  std::vector<Cell> cells_;                  // at(node, fr)
  std::vector<Quota> quotas_;                // at(node, fr)
  std::vector<int> fr_of_;                   // flavor * resource_count_ + resource
  std::vector<int> fr_flavor_;
  std::vector<int> fr_resource_;
  // Per ClusterQueue: itself then its ancestors up to the root, in chain_.
  std::vector<int> chain_begin_;  // cq_count_ + 1 offsets
  std::vector<int> chain_;
  // Per ClusterQueue: the frs it covers, by resource then flavor (one run per resource name).
  std::vector<int> covered_begin_;  // cq_count_ + 1 offsets
  std::vector<int> covered_;
  std::vector<double> weight_;  // per ClusterQueue
  std::vector<int> group_;      // per ClusterQueue: index into groups_
  std::vector<std::vector<int>> groups_;
  // Per cohort and resource: what fair sharing divides by (Kueue's calculateLendable).
  std::vector<int64_t> lendable_;
};

}  // namespace gpuaas::core::admission
