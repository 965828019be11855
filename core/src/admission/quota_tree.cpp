// Quota accounting on the hot path: lookups, available(), usage propagation and fair sharing's
// dominant resource share. Flat arrays indexed by node and fr; nothing here allocates.
#include "gpuaas/admission/quota_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuaas::core::admission {

int QuotaTree::cluster_queue_count() const { return cq_count_; }

int QuotaTree::cluster_queue_index(const std::string& name) const { return cq_names_.find(name); }

const std::string& QuotaTree::cluster_queue_name(int cq) const { return cq_names_.name(cq); }

int QuotaTree::root_of(int cq) const {
  const int root = chain_[chain_begin_[cq + 1] - 1];
  return root == cq ? -1 : root - cq_count_;
}

const std::vector<int>& QuotaTree::cluster_queues_under_root_of(int cq) const {
  return groups_[group_[cq]];
}

int QuotaTree::cohort_count() const { return cohort_names_.size(); }

const std::string& QuotaTree::cohort_name(int cohort) const { return cohort_names_.name(cohort); }

int QuotaTree::flavor_count() const { return flavor_names_.size(); }

int QuotaTree::flavor_index(const std::string& flavor) const { return flavor_names_.find(flavor); }

const std::string& QuotaTree::flavor_name(int flavor) const { return flavor_names_.name(flavor); }

int QuotaTree::fr_index(int flavor, int resource) const {
  if (flavor < 0 || flavor >= flavor_count() || resource < 0 || resource >= resource_count_) {
    return -1;
  }
  return fr_of_[flavor * resource_count_ + resource];
}

int QuotaTree::fr_count() const { return fr_count_; }

int QuotaTree::fr_flavor(int fr) const { return fr_flavor_[fr]; }

int QuotaTree::fr_resource(int fr) const { return fr_resource_[fr]; }

int64_t QuotaTree::nominal(int cq, int fr) const { return quotas_[at(cq, fr)].nominal; }

int64_t QuotaTree::usage(int cq, int fr) const { return cells_[at(cq, fr)].usage; }

std::optional<int64_t> QuotaTree::borrowing_limit(int cq, int fr) const {
  const int64_t v = quotas_[at(cq, fr)].borrowing_limit;
  return v == kNoLimit ? std::nullopt : std::optional<int64_t>(v);
}

std::optional<int64_t> QuotaTree::lending_limit(int cq, int fr) const {
  const int64_t v = quotas_[at(cq, fr)].lending_limit;
  return v == kNoLimit ? std::nullopt : std::optional<int64_t>(v);
}

// Kueue's available(), unrolled from the root down: at the root, its subtree quota less its
// usage; below, a node gets its unused guarantee plus what the level above offers, which its
// borrowingLimit caps at subtree + limit less what it already holds above its guarantee.
int64_t QuotaTree::available(int cq, int fr) const {
  const int* const first = chain_.data() + chain_begin_[cq];
  const int* node = chain_.data() + chain_begin_[cq + 1] - 1;
  const Cell& root = cells_[at(*node, fr)];
  int64_t available = root.subtree - root.usage;
  while (node != first) {
    --node;
    const Cell& cell = cells_[at(*node, fr)];
    if (cell.cap != kNoLimit) {
      available = std::min(available, cell.cap - std::max(cell.usage, cell.guaranteed));
    }
    available += std::max<int64_t>(0, cell.guaranteed - cell.usage);
  }
  return available;
}

int64_t QuotaTree::potential_available(int cq, int fr) const {
  return quotas_[at(cq, fr)].potential;
}

bool QuotaTree::covers(int cq, int fr) const { return quotas_[at(cq, fr)].covered; }

bool QuotaTree::would_borrow(int cq, int fr, int64_t milli) const {
  return cells_[at(cq, fr)].usage + milli > quotas_[at(cq, fr)].nominal;
}

bool QuotaTree::is_borrowing(int cq) const {
  for (int i = covered_begin_[cq]; i < covered_begin_[cq + 1]; ++i) {
    if (cells_[at(cq, covered_[i])].usage > quotas_[at(cq, covered_[i])].nominal) return true;
  }
  return false;
}

// A parent counts only what its child uses above the child's guarantee, so each level passes up
// the change in that excess; it stops early where the change is absorbed.
void QuotaTree::add_usage(int cq, const FrAmounts& amounts, int sign) {
  for (const auto& amount : amounts) {
    int64_t delta = amount.milli * sign;
    int node = cq;
    while (delta != 0) {
      Cell& cell = cells_[at(node, amount.fr)];
      const int64_t above_before = std::max<int64_t>(0, cell.usage - cell.guaranteed);
      cell.usage += delta;
      node = parent_[node];
      if (node < 0) break;
      delta = std::max<int64_t>(0, cell.usage - cell.guaranteed) - above_before;
    }
  }
}

// Kueue's dominantResourceShare: per resource name, what the ClusterQueue uses above its quota
// summed over flavors, per mille of what its parent can lend of that resource; the largest.
QuotaTree::Share QuotaTree::share(int cq, const FrAmounts& extra) const {
  Share share;
  const int parent = parent_[cq];
  if (parent < 0) return share;
  const int64_t* lendable = lendable_.data() + (parent - cq_count_) * resource_count_;
  const int* fr = covered_.data() + covered_begin_[cq];
  const int* const end = covered_.data() + covered_begin_[cq + 1];
  while (fr != end) {
    const int resource = fr_resource_[*fr];
    int64_t borrowed = 0;
    for (; fr != end && fr_resource_[*fr] == resource; ++fr) {
      const Cell& cell = cells_[at(cq, *fr)];
      int64_t used = cell.usage;
      for (const auto& e : extra) {
        if (e.fr == *fr) used += e.milli;
      }
      borrowed += std::max<int64_t>(0, used - cell.subtree);
    }
    if (borrowed == 0) continue;
    share.borrowing = true;
    if (lendable[resource] > 0) {
      share.ratio = std::max(share.ratio, static_cast<double>(borrowed) * 1000.0 /
                                              static_cast<double>(lendable[resource]));
    }
  }
  return share;
}

// Weights are not negative (the loader checks); a zero weight that borrows comes last.
double QuotaTree::precise_dominant_resource_share(int cq, const FrAmounts& extra) const {
  const Share s = share(cq, extra);
  if (!s.borrowing) return 0;
  if (weight_[cq] <= 0) return std::numeric_limits<double>::infinity();
  return s.ratio / weight_[cq];
}

int64_t QuotaTree::dominant_resource_share(int cq, const FrAmounts& extra) const {
  const double precise = std::ceil(precise_dominant_resource_share(cq, extra));
  if (precise >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(precise);
}

}  // namespace gpuaas::core::admission
