// What idle reclaim remembers per workload: where it stands (active, at zero with its quota
// reserved, at zero with the quota released), since when, and why. The rules come from the
// policy set: IdleReclaimPolicies and the culling of NotebookPolicies. Private to gpuaas_core.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/admission/workload.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "gpuaas/reclaim/arrival_model.hpp"
#include "gpuaas/wire/event_time.hpp"
#include "workload_selector.hpp"

namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base

namespace gpuaas::core {

// One rule in force: an IdleReclaimPolicy, or a NotebookPolicy's culling written as one.
struct ReclaimRule {
  std::string id;  // "IdleReclaimPolicy/NAME" or "NotebookPolicy/NAME"
  policy::IdleReclaimPolicy spec;
  std::unique_ptr<reclaim::ColdStartBudget> budget;  // learnArrivals: shared by its workloads
  bool sessions_only = false;  // a NotebookPolicy's: for the kinds plugins declare sessions
};

enum class ReclaimPhase {
  kActive,    // running, watched for idleness
  kAtZero,    // scaled to zero (or suspended) with its quota reserved
  kReleased,  // at zero, quota released: waking queues it again
  kWaking,    // queued again after a release; admission brings it back
  // Woken with its quota lent and in use: what ran on the loan stops first, then admission
  // gives the reservation back (rule reclaim/wake) and it scales back.
  kTakingBack,
};
inline constexpr int kReclaimPhases = 5;
const char* to_string(ReclaimPhase p);

struct ReclaimState {
  ReclaimPhase phase = ReclaimPhase::kActive;
  std::string rule;  // ReclaimRule::id it was matched with
  wire::EventTime running_since{};
  wire::EventTime last_activity{};
  std::string evidence;  // what the last look found
  std::optional<wire::EventTime> woken_at;
  // Woken: not idle until more of its pods run than did at zero (-1: not waiting for them).
  int waking_from_pods = -1;
  // At zero.
  wire::EventTime at_zero_since{};
  wire::EventTime reserved_until{};
  bool lent = false;
  policy::IdleAction action = policy::IdleAction::kScaleToZero;
  bool saw_suspended = false;  // lifecycle showed SUSPENDED since the action took effect
  std::string reason;          // why it went to zero
  std::optional<admission::WorkloadInfo> demand;  // as admitted, to queue it again after a release
  // learnArrivals.
  std::unique_ptr<reclaim::ArrivalModel> arrivals;
  std::optional<wire::EventTime> last_arrival;
  std::chrono::milliseconds timeout_in_force{0};
  std::chrono::milliseconds wake_latency{std::chrono::seconds(60)};  // the last wake's, measured
};

// How learnArrivals learns: never a timeout below 30 s (two or three scrapes at common
// intervals: a shorter one would read the gap between samples as idleness).
reclaim::ArrivalSettings arrival_settings();

class ReclaimBook {
 public:
  void set_policy(const policy::PolicySet& set);
  bool empty() const { return rules_.empty(); }
  // The first rule whose selector matches: a NotebookPolicy's culling for notebooks, then the
  // IdleReclaimPolicies in file order. `cluster_queue`: the workload's, "" when unknown.
  // `session`: the kind's plugin declares it a session (a notebook).
  ReclaimRule* match(const KubeObject& obj, const std::string& cluster_queue, bool session);
  ReclaimRule* rule(const std::string& id);
  const ReclaimRule* rule(const std::string& id) const;
  // The NotebookPolicy gating the session, or nullptr (always for a kind that is no session).
  const policy::NotebookPolicy* gate_of(const KubeObject& obj, bool session) const;
  // Whether any NotebookPolicy has a maxWait: without one there is no wait to watch.
  bool any_max_wait() const {
    for (const auto& nb : notebooks_)
      if (nb.max_wait.count() > 0) return true;
    return false;
  }

  std::map<std::string, ReclaimState>& states() { return states_; }
  const std::map<std::string, ReclaimState>& states() const { return states_; }
  ReclaimState* find(const std::string& key);
  const ReclaimState* find(const std::string& key) const;
  // At zero with its quota released: the admission queue must not take it in.
  bool holds_out(const std::string& key) const;

  // Snapshots (reclaim_snapshot.cpp): the rules' cold-start budgets and every workload's state.
  // The rules themselves come from the policy: load_state expects a fresh book on which
  // set_policy was called with an equal policy set, and fails when its rules differ.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

  // Test seam: when set, every reclaim pass first hands the book and the policy in force to it,
  // so that tests can swap the book for a copy restored from its snapshot mid-run.
  using PassHook = std::function<void(ReclaimBook&, const policy::PolicySet&)>;
  static PassHook& pass_hook();

 private:
  std::vector<ReclaimRule> rules_;
  std::vector<policy::NotebookPolicy> notebooks_;
  std::map<std::string, ReclaimState> states_;
};

}  // namespace gpuaas::core
