// QuotaTree in a snapshot: every member as it is. Usage is the state; the rest follows from the
// policy, but also from which resources were interned when the tree was built (the (flavor,
// resource) numbering), so it is written too rather than trusted to a rebuild.
#include <string>

#include "gpuaas/admission/archive_fields.hpp"
#include "gpuaas/admission/quota_tree.hpp"
#include "gpuaas/base/archive.hpp"

namespace gpuaas::core::admission {

// A member added to QuotaTree must be written too: its size changes with it and stops the build.
#if GPUAAS_ARCHIVE_PINNED_LAYOUT
static_assert(sizeof(QuotaTree) == 616, "QuotaTree changed: update QuotaTree::archive");
#endif

template <typename A>
void QuotaTree::archive(A& a) {
  a(cq_count_, fr_count_, resource_count_, cq_names_, cohort_names_, flavor_names_, resource_names_,
    parent_, cells_, quotas_, fr_of_, fr_flavor_, fr_resource_, chain_begin_, chain_,
    covered_begin_, covered_, weight_, group_, groups_, lendable_);
}

void QuotaTree::save_state(base::ArchiveWriter& w) const {
  const_cast<QuotaTree*>(this)->archive(w);  // archive() only reads when writing
}

namespace {

bool same_names(const NameIndex& a, const NameIndex& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i)
    if (a.name(i) != b.name(i)) return false;
  return true;
}

}  // namespace

void QuotaTree::load_state(base::ArchiveReader& r) {
  QuotaTree t = *this;
  t.archive(r);
  if (!r.ok()) return;
  if (!same_names(t.cq_names_, cq_names_) || !same_names(t.cohort_names_, cohort_names_) ||
      !same_names(t.flavor_names_, flavor_names_)) {
    r.fail("the snapshot's quota tree has other ClusterQueues, cohorts or flavors than the policy");
    return;
  }
  // Sizes every accessor indexes by, so that a damaged snapshot cannot index out of range.
  const auto n_nodes = static_cast<std::size_t>(t.cq_count_ + t.cohort_names_.size());
  const auto cells = n_nodes * static_cast<std::size_t>(t.fr_count_);
  const auto cqs1 = static_cast<std::size_t>(t.cq_count_) + 1;
  bool ok = t.fr_count_ >= 0 && t.resource_count_ >= 0 && t.parent_.size() == n_nodes &&
            t.cells_.size() == cells && t.quotas_.size() == cells &&
            t.fr_flavor_.size() == static_cast<std::size_t>(t.fr_count_) &&
            t.fr_resource_.size() == static_cast<std::size_t>(t.fr_count_) &&
            t.fr_of_.size() == static_cast<std::size_t>(t.flavor_names_.size()) *
                                   static_cast<std::size_t>(t.resource_count_) &&
            t.chain_begin_.size() == cqs1 && t.covered_begin_.size() == cqs1 &&
            t.weight_.size() == static_cast<std::size_t>(t.cq_count_) &&
            t.group_.size() == static_cast<std::size_t>(t.cq_count_);
  for (int p : t.parent_) ok = ok && p >= -1 && p < static_cast<int>(n_nodes);
  for (int fr : t.fr_of_) ok = ok && fr >= -1 && fr < t.fr_count_;
  for (int f : t.fr_flavor_) ok = ok && f >= 0 && f < t.flavor_names_.size();
  for (int x : t.fr_resource_) ok = ok && x >= 0 && x < t.resource_count_;
  for (int x : t.chain_) ok = ok && x >= 0 && x < static_cast<int>(n_nodes);
  for (int x : t.covered_) ok = ok && x >= 0 && x < t.fr_count_;
  for (int g : t.group_) ok = ok && g >= 0 && static_cast<std::size_t>(g) < t.groups_.size();
  for (const auto& g : t.groups_)
    for (int c : g) ok = ok && c >= 0 && c < t.cq_count_;
  for (const auto* offsets : {&t.chain_begin_, &t.covered_begin_}) {
    const std::size_t end = offsets == &t.chain_begin_ ? t.chain_.size() : t.covered_.size();
    for (std::size_t i = 0; ok && i < offsets->size(); ++i)
      ok = (*offsets)[i] >= 0 && static_cast<std::size_t>((*offsets)[i]) <= end &&
           (i == 0 || (*offsets)[i] >= (*offsets)[i - 1]);
  }
  if (!ok) {
    r.fail("the snapshot's quota tree is inconsistent");
    return;
  }
  *this = std::move(t);
}

}  // namespace gpuaas::core::admission
