// The quota tree's invariants, checked from scratch for the property tests (not the hot path).
#include <algorithm>
#include <string>
#include <vector>

#include "gpuaas/admission/quota_tree.hpp"

namespace gpuaas::core::admission {

std::string QuotaTree::node_name(int node) const {
  if (node < cq_count_) return "ClusterQueue " + cq_names_.name(node);
  return "Cohort " + cohort_names_.name(node - cq_count_);
}

std::string QuotaTree::fr_name(int fr) const {
  return flavor_names_.name(fr_flavor_[fr]) + "/" + resource_names_[fr_resource_[fr]];
}

bool QuotaTree::check_invariants(std::string* why) const {
  auto fail = [&](int node, int fr, const std::string& what) {
    if (why) *why = node_name(node) + ", " + fr_name(fr) + ": " + what;
    return false;
  };
  const int nodes = static_cast<int>(parent_.size());
  // A cohort's usage is what its children use above their guarantees; recount it.
  std::vector<int64_t> recount(cells_.size(), 0);
  for (int n = 0; n < nodes; ++n) {
    if (parent_[n] < 0) continue;
    for (int fr = 0; fr < fr_count_; ++fr) {
      const Cell& cell = cells_[at(n, fr)];
      recount[at(parent_[n], fr)] += std::max<int64_t>(0, cell.usage - cell.guaranteed);
    }
  }
  for (int n = 0; n < nodes; ++n) {
    for (int fr = 0; fr < fr_count_; ++fr) {
      const Cell& cell = cells_[at(n, fr)];
      const Quota& quota = quotas_[at(n, fr)];
      const std::string usage = "usage " + std::to_string(cell.usage);
      if (cell.usage < 0) return fail(n, fr, usage + " is negative");
      if (n >= cq_count_ && cell.usage != recount[at(n, fr)]) {
        return fail(n, fr,
                    usage + " but its children use " + std::to_string(recount[at(n, fr)]) +
                        " above their guarantees");
      }
      if (parent_[n] < 0) {
        if (cell.usage > cell.subtree) {
          return fail(n, fr, usage + " above the root's quota " + std::to_string(cell.subtree));
        }
        continue;
      }
      if (cell.cap != kNoLimit && cell.usage > cell.cap) {
        return fail(n, fr,
                    usage + " above subtree quota " + std::to_string(cell.subtree) +
                        " + borrowingLimit " + std::to_string(quota.borrowing_limit));
      }
      // What the parent sees of this node's quota is all it can lend on.
      if (quota.lending_limit != kNoLimit && cell.subtree - cell.guaranteed > quota.lending_limit) {
        return fail(n, fr,
                    "lends " + std::to_string(cell.subtree - cell.guaranteed) +
                        " above lendingLimit " + std::to_string(quota.lending_limit));
      }
    }
  }
  // What a lendingLimit keeps is never taken by others: it stays available to the ClusterQueue.
  for (int cq = 0; cq < cq_count_; ++cq) {
    for (int fr = 0; fr < fr_count_; ++fr) {
      const Cell& cell = cells_[at(cq, fr)];
      const int64_t kept = std::max<int64_t>(0, cell.guaranteed - cell.usage);
      if (available(cq, fr) < kept) {
        return fail(cq, fr,
                    "available " + std::to_string(available(cq, fr)) +
                        " below its unused guaranteed quota " + std::to_string(kept));
      }
    }
  }
  return true;
}

}  // namespace gpuaas::core::admission
