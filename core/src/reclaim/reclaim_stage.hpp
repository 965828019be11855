// Idle reclaim and notebook gating in the daemon: watches the workloads an IdleReclaimPolicy
// (or a NotebookPolicy's culling) selects, scales idle ones to zero through their plugin while
// the admission ledger keeps their quota reserved (Scheduler::park), releases the reservation
// after keepQuotaFor, and wakes them when asked for: a request, a task, a user starting a
// stopped notebook (reclaim_stage.cpp, reclaim_steps.cpp). Notebooks a NotebookPolicy gates are
// held until admitted (notebook_gate.cpp). Every step is an action or a status event with its
// rule and reason; time is event time. Private to gpuaas_core.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "reclaim/reclaim_book.hpp"

namespace gpuaas::telemetry {
class Gauge;
class Counter;
class Registry;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

class AdmissionStage;
class DecisionSink;

// The wait before zero: learned per workload, or the policy's window and grace (Knative: the
// stable window, then the scale-to-zero grace period).
std::chrono::milliseconds idle_timeout(const ReclaimState& st, const ReclaimRule& rule);
// How many of the pods run.
int running_pods(const std::vector<const KubeObject*>& pods);

class ReclaimStage {
 public:
  ReclaimStage(telemetry::Registry* registry, WorkloadInterpreter* interpreter);

  void set_policy(const policy::PolicySet& set) { book_.set_policy(set); }
  // Whether any rule watches workloads (without one the pass does nothing).
  bool watching() const { return !book_.empty(); }
  const ReclaimBook& book() const { return book_; }

  // Inputs from the model.
  // The object of a workload it watches changed: a user started it? Wakes go to `out`.
  void object_changed(const ClusterModel& model, const std::string& key, const KubeObject& obj,
                      AdmissionStage& admission, DecisionSink& sink,
                      std::vector<admission::Decision>& out);
  // At zero with its quota released: admission must not take it in.
  bool holds_out(const std::string& key) const { return book_.holds_out(key); }
  // Queued again after a release: what it had, or nullptr.
  const admission::WorkloadInfo* waking_demand(const std::string& key) const;
  // The NotebookPolicy gating the notebook, or nullptr.
  const policy::NotebookPolicy* gate_of(const KubeObject& obj, const WorkloadView& view) const {
    return book_.gate_of(obj, view.session);
  }
  void gate_candidate(const std::string& key) { gate_candidates_.insert(key); }
  void forget(const std::string& key);

  // The pass (every kReclaimInterval of event time, and for those at zero whenever samples
  // arrive): scales idle ones to zero, releases reservations that expired, wakes those asked
  // for. Preemptions that take lent quota back go to `out`.
  void pass(const ClusterModel& model, AdmissionStage& admission, DecisionSink& sink,
            std::vector<admission::Decision>& out);
  // Notebooks a NotebookPolicy gates that run without admission are stopped until admitted;
  // those that wait past maxWait are reported once (notebook_gate.cpp).
  void gate(const ClusterModel& model, const AdmissionStage& admission, DecisionSink& sink);
  // How an admitted workload comes back: scaled back when idle reclaim had scaled it to zero.
  WorkloadAction admit_action(const ClusterModel& model, const std::string& key);
  // Waking workloads (node scale-out counts them as demand).
  std::set<std::string> waking() const;
  bool max_wait_reported(const std::string& key) const { return max_wait_reported_.count(key); }

  // Snapshots: the pass's own clock and gate state, then the book (apart, for an older
  // snapshot layout: pipeline_snapshot.cpp).
  template <typename Self, typename A>
  static void pass_fields(Self& self, A& a) {
    a(self.next_pass_, self.samples_seen_, self.gate_candidates_, self.gated_,
      self.max_wait_reported_);
  }
  void save_book(base::ArchiveWriter& w) const { book_.save_state(w); }
  void load_book(base::ArchiveReader& r) { book_.load_state(r); }

 private:
  // reclaim_steps.cpp
  void reclaim(const ClusterModel& model, const std::string& key, const KubeObject& obj,
               ReclaimState& st, ReclaimRule& rule, const std::string& why,
               AdmissionStage& admission, DecisionSink& sink);
  void wake_host(const ClusterModel& model, const KubeObject& obj, const WorkloadView& v,
                 AdmissionStage& admission, DecisionSink& sink,
                 std::vector<admission::Decision>& out);
  void wake(const ClusterModel& model, const std::string& key, const KubeObject& obj,
            ReclaimState& st, const std::string& why, AdmissionStage& admission, DecisionSink& sink,
            std::vector<admission::Decision>& out);
  void release_reservation(const ClusterModel& model, const std::string& key, const KubeObject& obj,
                           ReclaimState& st, AdmissionStage& admission, DecisionSink& sink);
  void watch_new(const ClusterModel& model, const AdmissionStage& admission);
  void look(const ClusterModel& model, const std::string& key, const KubeObject& obj,
            const std::vector<const KubeObject*>& pods, ReclaimState& st, ReclaimRule& rule,
            AdmissionStage& admission, DecisionSink& sink);
  void count_phases();

  WorkloadInterpreter* interpreter_;
  ReclaimBook book_;
  wire::EventTime next_pass_{};
  uint64_t samples_seen_ = 0;
  std::set<std::string> gate_candidates_;    // notebooks seen this event that a policy gates
  std::set<std::string> gated_;              // stopped by the gate, not yet admitted
  std::set<std::string> max_wait_reported_;  // notebooks reported for waiting past maxWait
  telemetry::Family<telemetry::Counter>* actions_ = nullptr;  // by action and rule
  telemetry::Family<telemetry::Gauge>* workloads_ = nullptr;  // by phase
};

}  // namespace gpuaas::core
