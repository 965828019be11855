// ReclaimBook in a snapshot. Rules are the policy's and are not written, only their ids (to
// check that the policy is the same) and the cold-start budgets learned under them; every
// workload's state is written whole, its demand with the admission engine's field lists.
#include <memory>

#include "gpuaas/admission/archive_fields.hpp"
#include "gpuaas/base/archive.hpp"
#include "reclaim_book.hpp"

namespace gpuaas::core {

// Found by argument-dependent lookup from the archive (std::map<std::string, ReclaimState>).
template <typename A>
void archive_fields(A& a, ReclaimState& s) {
  a(s.phase, s.rule, s.running_since, s.last_activity, s.evidence, s.woken_at, s.waking_from_pods,
    s.at_zero_since, s.reserved_until, s.lent, s.action, s.saw_suspended, s.reason, s.demand,
    s.last_arrival, s.timeout_in_force, s.wake_latency);
  // The arrival model is owned through a pointer: a flag, then its fields.
  bool has = s.arrivals != nullptr;
  a(has);
  if constexpr (A::kLoading) {
    if (!has) s.arrivals.reset();
    if (has && !s.arrivals) s.arrivals = std::make_unique<reclaim::ArrivalModel>();
  }
  if (has) a(*s.arrivals);
}

void ReclaimBook::save_state(base::ArchiveWriter& w) const {
  w.count(rules_.size());
  for (const auto& rule : rules_) {
    w(rule.id, rule.budget != nullptr);
    if (rule.budget) w(*rule.budget);
  }
  w(states_);
}

void ReclaimBook::load_state(base::ArchiveReader& r) {
  const std::size_t n = r.count();
  if (r.ok() && n != rules_.size()) {
    r.fail("the snapshot has " + std::to_string(n) + " reclaim rules, the policy " +
           std::to_string(rules_.size()));
    return;
  }
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    ReclaimRule& rule = rules_[i];
    std::string id;
    bool has_budget = false;
    r(id, has_budget);
    if (!r.ok()) return;
    if (id != rule.id || has_budget != (rule.budget != nullptr)) {
      r.fail("the snapshot's reclaim rule " + id + " is not the policy's " + rule.id);
      return;
    }
    if (has_budget) r(*rule.budget);
  }
  r(states_);
}

ReclaimBook::PassHook& ReclaimBook::pass_hook() {
  static PassHook hook;
  return hook;
}

}  // namespace gpuaas::core
