// Admission in the daemon: follows the cluster model into the admission engine (nodes, the pods
// of queued workloads, workloads as their plugins see them), runs the engine's pass, and sends
// its decisions (admit with a placement, preempt) through the sink. Admissions and preemptions
// whose patch met a conflict are sent again from the newer object (conflict_reissue.cpp).
// Private to gpuaas_core.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/v1/event.pb.h"

namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base
namespace gpuaas::telemetry {
class Counter;
class Registry;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

class BindingStage;
class DecisionSink;
class QueueMetrics;

class AdmissionStage {
 public:
  AdmissionStage(telemetry::Registry* registry, QueueMetrics& queue_metrics);
  ~AdmissionStage();

  // What the other stages say while admission sends its decisions.
  struct Hooks {
    // How an admitted workload comes back (idle reclaim woke it from zero: scale back).
    std::function<WorkloadAction(const std::string& key)> admit_action;
    // A preempted workload already stopped: fed to the stages again, so it queues now.
    std::function<void(const std::string& key)> requeue;
    // A decision is about to leave: binding keeps an admission's plan (its pods' nodes), and
    // drops it on a preemption. Returns the hostnames of a preferred binding's nodes (for the
    // templates' preferred node affinity), empty otherwise.
    std::function<std::vector<std::string>(const admission::Decision&,
                                           const std::vector<std::string>& pod_sets)>
        placed;
  };

  bool active() const { return engine_ != nullptr; }
  // A policy set comes into force. The first one makes the engine (true: the caller feeds it
  // what the model holds); later ones reload it, admitted workloads keeping their reservation.
  bool set_policy(std::shared_ptr<const policy::PolicySet> set, admission::Time now);
  admission::Scheduler& engine() { return *engine_; }
  const admission::Scheduler& engine() const { return *engine_; }

  // Inputs from the model.
  // `cordoned`: being drained for scale-in, so nothing new goes there.
  void upsert_node(const ClusterModel& model, const std::string& name, bool cordoned);
  // Pods of queued workloads are counted by the engine's own placements, which follow a pod
  // bound elsewhere than planned (Scheduler::move_pod); the rest (daemon sets, unmanaged pods,
  // pods beyond what was admitted) is what nodes have less of. The caller then updates the
  // pod's node.
  void update_pod(const ClusterModel& model, const ModelChange& change, BindingStage& binding);
  void set_namespace(const KubeObject& ns, admission::Time now);
  // A PriorityClass's value gives the priority of workloads whose pods name it.
  void set_priority_class(const KubeObject& pc, admission::Time now);
  void forget_priority_class(const std::string& name, admission::Time now);
  // Queues the workload as its plugin sees it. `waking_demand`: what it had when idle reclaim
  // released its quota (it asks for that again, not its scaled-down spec). `gated`: a
  // NotebookPolicy holds it until admitted. True when the notebook gate must look at it after
  // this pass: queued, gated and not admitted (if it started on its own, it is stopped).
  bool upsert_workload(const ClusterModel& model, const std::string& key, const KubeObject& obj,
                       const WorkloadView& view, const admission::WorkloadInfo* waking_demand,
                       bool gated);
  void forget(const std::string& key, admission::Time now);
  // Idle reclaim released its quota: out of the queue until asked for.
  void release(const std::string& key, admission::Time now);
  // Idle reclaim woke it after a release: queued again with what it was admitted with.
  void requeue(admission::WorkloadInfo info, admission::Time now);
  // What the workload asks for as admitted (idle reclaim keeps it to queue it again).
  std::optional<admission::WorkloadInfo> admitted_demand(const ClusterModel& model,
                                                         const std::string& key,
                                                         const KubeObject& obj);

  // The pass: the engine's decisions at `now`.
  std::vector<admission::Decision> schedule(admission::Time now) { return engine_->schedule(now); }
  // Decisions become the plugin's patches (admissions with their placement hint), then the
  // status of every workload whose reason changed.
  void emit(const ClusterModel& model, std::vector<admission::Decision> decisions,
            DecisionSink& sink, const Hooks& hooks);
  // conflict_reissue.cpp. `reissues`: the rules whose conflicts admission redoes itself (the
  // others are ConflictRetry's).
  static bool reissues(const std::string& rule);
  void action_result(const v1::ActionResult& result);
  void reissue_pass(const ClusterModel& model, DecisionSink& sink, const Hooks& hooks);
  bool reissue_pending() const { return !reissue_.empty(); }

  // Why a workload with the queue label is not in the queue (its plugin's error, a group not
  // complete): {reason, message}, or nullptr when it is queued or not ours.
  const std::pair<std::string, std::string>* unqueued(const std::string& key) const;
  const std::map<std::string, std::pair<std::string, std::string>>& unqueued_all() const {
    return unqueued_;
  }

  bool admitted(const std::string& key) const { return admitted_.count(key) > 0; }
  bool queued(const std::string& key) const { return queued_.count(key) > 0; }
  const std::set<std::string>& queued_keys() const { return queued_; }
  // When the workload was first seen (its queue order), or nullptr.
  const admission::Time* first_seen(const std::string& key) const;

  // Snapshots: what the stage keeps about the workloads it queues, then the engine. The two
  // field lists are apart because an older snapshot layout wrote other stages' fields between
  // them (pipeline_snapshot.cpp).
  template <typename Self, typename A>
  static void queue_fields(Self& self, A& a) {
    a(self.first_seen_, self.admitted_, self.queued_, self.managed_pods_, self.managed_requests_);
  }
  template <typename Self, typename A>
  static void conflict_fields(Self& self, A& a) {
    a(self.admit_requests_, self.reissue_);
  }
  void save_engine(base::ArchiveWriter& w) const;
  void load_engine(base::ArchiveReader& r, std::shared_ptr<const policy::PolicySet> set);

 private:
  void count(const admission::Decision& d, wire::EventTime now);
  void note_unqueued(const std::string& key, const KubeObject& obj, const WorkloadView& view);
  void emit_unqueued(const ClusterModel& model, DecisionSink& sink);

  std::unique_ptr<admission::Scheduler> engine_;
  QueueMetrics& queue_metrics_;
  std::unordered_map<std::string, admission::Time> first_seen_;  // queue order
  std::set<std::string> admitted_;  // admitted by us: PENDING then means starting, not waiting
  std::set<std::string> queued_;    // keys the engine holds
  // Pods of queued workloads, by pod key: their node and requests (the engine counts them).
  std::unordered_map<std::string, std::pair<std::string, ResourceList>> managed_pods_;
  std::unordered_map<std::string, ResourceList> managed_requests_;  // by node
  // The admission last sent per admitted workload: its ActionRequest (serialized) and
  // placement hint, so a patch that met a conflict can be sent again from a newer object.
  std::map<std::string, std::pair<std::string, std::string>> admit_requests_;
  // Admissions and preemptions that met a CONFLICT: the rule and the resourceVersion the patch
  // was based on. Sent again once the object in the model has another resourceVersion.
  std::map<std::string, std::pair<std::string, std::string>> reissue_;
  // Not in the queue, with the reason shown (explain, a status event, so a Kubernetes Event);
  // rebuilt from the model after a restart, since the views are in the snapshot.
  std::map<std::string, std::pair<std::string, std::string>> unqueued_;
  std::set<std::string> unqueued_changed_;
  // The PriorityClass with globalDefault: true ("" when none). Not in the snapshot: the engine
  // keeps its value, and the next change of it comes as an object event.
  std::string global_default_;
  // Pods counted in gpuaas_pods_bound_elsewhere_total, once each (not in the snapshot).
  std::set<std::string> bound_elsewhere_seen_;
  telemetry::Counter* bound_elsewhere_ = nullptr;
  telemetry::Counter* bad_annotations_ = nullptr;
  telemetry::Family<telemetry::Counter>* decisions_ = nullptr;  // by kind and rule
};

}  // namespace gpuaas::core
