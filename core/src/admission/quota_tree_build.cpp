// Building the quota tree from a policy set: nodes, (flavor, resource) indices, and the figures
// that depend on quota alone (subtree quota, guarantees, caps, potentialAvailable, lendable).
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuaas/admission/quota_tree.hpp"

namespace gpuaas::core::admission {
namespace {

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

// One resource quota that a node's resourceGroups write, by index.
struct Entry {
  int flavor = 0;
  int resource = 0;
  const policy::ResourceQuota* quota = nullptr;
};

}  // namespace

// Names the nodes and links each to its parent: the written Cohorts, then those only named by a
// ClusterQueue or as a parent. Returns the written Cohort of each cohort node (null: implicit).
std::vector<const policy::Cohort*> QuotaTree::link_nodes(const policy::PolicySet& set) {
  // Cohorts: the written ones, then those only named by a ClusterQueue or as a parent (Kueue
  // creates these implicitly: no quota of their own, no parent).
  std::vector<const policy::Cohort*> written;
  for (const auto& cohort : set.cohorts) {
    if (cohort_names_.intern(cohort.name) != static_cast<int>(written.size())) {
      throw std::invalid_argument("Cohort " + cohort.name + " is written twice");
    }
    written.push_back(&cohort);
  }
  auto cohort_of = [&](const std::string& name) {
    const int c = cohort_names_.intern(name);
    if (c == static_cast<int>(written.size())) written.push_back(nullptr);
    return c;
  };
  std::vector<int> cq_cohort(cq_count_, -1);
  for (int q = 0; q < cq_count_; ++q) {
    const auto& name = set.cluster_queues[q].cohort;
    if (!name.empty()) cq_cohort[q] = cohort_of(name);
  }
  std::vector<int> cohort_parent;
  for (std::size_t c = 0; c < written.size(); ++c) {  // grows with parents named only here
    const policy::Cohort* cohort = written[c];
    cohort_parent.push_back(cohort && !cohort->parent.empty() ? cohort_of(cohort->parent) : -1);
  }

  const int cohorts = static_cast<int>(written.size());
  const int nodes = cq_count_ + cohorts;
  parent_.assign(nodes, -1);
  for (int q = 0; q < cq_count_; ++q) {
    const int c = cq_cohort[q];
    if (c >= 0) parent_[q] = cq_count_ + c;
  }
  for (int c = 0; c < cohorts; ++c) {
    const int p = cohort_parent[c];
    if (p >= 0) parent_[cq_count_ + c] = cq_count_ + p;
  }

  return written;
}

std::vector<int> QuotaTree::node_depths() const {
  const int nodes = static_cast<int>(parent_.size());
  // Depth of every node; a cycle has no root to account at, so the set is refused (Kueue
  // deactivates such a tree; the loader rejects it first).
  std::vector<int> depth(nodes, -1);  // -2: on the current walk
  std::vector<int> walk;
  for (int n = 0; n < nodes; ++n) {
    walk.clear();
    int x = n;
    while (x >= 0 && depth[x] == -1) {
      depth[x] = -2;
      walk.push_back(x);
      x = parent_[x];
    }
    if (x >= 0 && depth[x] == -2) {
      throw std::invalid_argument("cohort cycle through " + cohort_names_.name(x - cq_count_));
    }
    int d = x < 0 ? -1 : depth[x];
    for (auto it = walk.rbegin(); it != walk.rend(); ++it) depth[*it] = ++d;
  }

  return depth;
}

QuotaTree::QuotaTree(const policy::PolicySet& set, NameIndex& resources) {
  for (const auto& flavor : set.flavors) flavor_names_.intern(flavor.name);
  for (const auto& cq : set.cluster_queues) {
    if (cq_names_.intern(cq.name) != cq_count_) {
      throw std::invalid_argument("ClusterQueue " + cq.name + " is written twice");
    }
    ++cq_count_;
  }

  const std::vector<const policy::Cohort*> written = link_nodes(set);
  const int cohorts = static_cast<int>(written.size());
  const int nodes = cq_count_ + cohorts;
  const std::vector<int> depth = node_depths();

  // Quotas as written. A flavor that is not a ResourceFlavor of the set is skipped: Kueue keeps
  // the ClusterQueue inactive (FlavorNotFound) and no workload can be assigned that flavor.
  std::vector<std::vector<Entry>> entries(nodes);
  auto collect = [&](int node, const std::vector<policy::ResourceGroup>& groups) {
    for (const auto& group : groups) {
      for (const auto& flavor : group.flavors) {
        const int f = flavor_names_.find(flavor.flavor);
        if (f < 0) continue;
        for (const auto& quota : flavor.resources) {
          entries[node].push_back({f, resources.intern(quota.name), &quota});
        }
      }
    }
  };
  for (int q = 0; q < cq_count_; ++q) {
    collect(q, set.cluster_queues[q].resource_groups);
  }
  for (int c = 0; c < cohorts; ++c) {
    if (written[c]) {
      collect(cq_count_ + c, written[c]->resource_groups);
    }
  }

  // fr indices, flavor-major, for the pairs written anywhere.
  resource_count_ = resources.size();
  for (int r = 0; r < resource_count_; ++r) resource_names_.push_back(resources.name(r));
  fr_of_.assign(flavor_count() * resource_count_, -1);
  for (const auto& list : entries) {
    for (const auto& e : list) {
      fr_of_[e.flavor * resource_count_ + e.resource] = 0;
    }
  }
  for (int f = 0; f < flavor_count(); ++f) {
    for (int r = 0; r < resource_count_; ++r) {
      int& fr = fr_of_[f * resource_count_ + r];
      if (fr < 0) continue;
      fr = fr_count_++;
      fr_flavor_.push_back(f);
      fr_resource_.push_back(r);
    }
  }

  const std::size_t cells = std::size_t(nodes) * std::size_t(fr_count_);
  cells_.assign(cells, Cell{});
  quotas_.assign(cells, Quota{});
  // A ClusterQueue may not borrow what it does not list: as if nominal 0, borrowingLimit 0.
  for (int q = 0; q < cq_count_; ++q) {
    for (int fr = 0; fr < fr_count_; ++fr) quotas_[at(q, fr)].borrowing_limit = 0;
  }
  for (int n = 0; n < nodes; ++n) {
    for (const auto& e : entries[n]) {
      Quota& quota = quotas_[at(n, fr_index(e.flavor, e.resource))];
      quota.nominal = e.quota->nominal_milli;
      quota.borrowing_limit = e.quota->borrowing_limit_milli.value_or(kNoLimit);
      quota.lending_limit = e.quota->lending_limit_milli.value_or(kNoLimit);
      quota.covered = true;
    }
  }

  sum_subtrees(depth, cohorts);
  index_cluster_queues(set, cohorts);
}

void QuotaTree::sum_subtrees(const std::vector<int>& depth, int cohorts) {
  const int nodes = static_cast<int>(parent_.size());
  const std::size_t cells = cells_.size();
  // Subtree quota bottom-up: a node is complete once every deeper node has lent to it.
  std::vector<int> order(nodes);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return depth[a] > depth[b]; });
  for (std::size_t i = 0; i < cells; ++i) cells_[i].subtree = quotas_[i].nominal;
  for (const int n : order) {
    const int parent = parent_[n];
    for (int fr = 0; fr < fr_count_; ++fr) {
      Cell& cell = cells_[at(n, fr)];
      const Quota& quota = quotas_[at(n, fr)];
      if (quota.lending_limit != kNoLimit) {
        cell.guaranteed = std::max<int64_t>(0, cell.subtree - quota.lending_limit);
      }
      if (quota.borrowing_limit != kNoLimit) {
        cell.cap = saturating_add(cell.subtree, quota.borrowing_limit);
      }
      if (parent >= 0) cells_[at(parent, fr)].subtree += cell.subtree - cell.guaranteed;
    }
  }
  // potentialAvailable top-down: it ignores usage, so it is fixed with the quotas.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int parent = parent_[*it];
    for (int fr = 0; fr < fr_count_; ++fr) {
      const Cell& cell = cells_[at(*it, fr)];
      int64_t potential = cell.subtree;
      if (parent >= 0) {
        potential = std::min(cell.cap, cell.guaranteed + quotas_[at(parent, fr)].potential);
      }
      quotas_[at(*it, fr)].potential = potential;
    }
  }
  // What a cohort can lend per resource name, summed over flavors (Kueue's calculateLendable:
  // the cohort's potentialAvailable, so a nested cohort counts what it could borrow too).
  lendable_.assign(cohorts * resource_count_, 0);
  for (int c = 0; c < cohorts; ++c) {
    for (int fr = 0; fr < fr_count_; ++fr) {
      lendable_[c * resource_count_ + fr_resource_[fr]] += quotas_[at(cq_count_ + c, fr)].potential;
    }
  }
}

void QuotaTree::index_cluster_queues(const policy::PolicySet& set, int cohorts) {
  // Per ClusterQueue: ancestors, covered frs, weight, and the ClusterQueues sharing its root.
  std::vector<int> group_of_root(cohorts, -1);
  for (int q = 0; q < cq_count_; ++q) {
    chain_begin_.push_back(static_cast<int>(chain_.size()));
    for (int x = q; x >= 0; x = parent_[x]) chain_.push_back(x);
    const int root = chain_.back();

    covered_begin_.push_back(static_cast<int>(covered_.size()));
    const auto first = covered_.size();
    for (int fr = 0; fr < fr_count_; ++fr) {
      if (quotas_[at(q, fr)].covered) covered_.push_back(fr);
    }
    std::stable_sort(covered_.begin() + static_cast<std::ptrdiff_t>(first), covered_.end(),
                     [&](int a, int b) { return fr_resource_[a] < fr_resource_[b]; });

    weight_.push_back(set.cluster_queues[q].fair_weight);

    int group = -1;
    if (root == q) {
      group = static_cast<int>(groups_.size());
      groups_.emplace_back();
    } else {
      int& g = group_of_root[root - cq_count_];
      if (g < 0) {
        g = static_cast<int>(groups_.size());
        groups_.emplace_back();
      }
      group = g;
    }
    groups_[group].push_back(q);
    group_.push_back(group);
  }
  chain_begin_.push_back(static_cast<int>(chain_.size()));
  covered_begin_.push_back(static_cast<int>(covered_.size()));
}

}  // namespace gpuaas::core::admission
