// Placement that binds: the nodes admission chose become each pod's own. A pod of a queued
// workload arrives behind the scheduling gate gpuaas.io/placement, labelled with its pod set
// (the webhook puts both on the workload's templates); once the workload is admitted and all of
// its pods exist, one patch per pod removes that gate (other gates kept) and narrows the pod to
// its node (pod_narrowing.hpp), conditioned on the pod's resourceVersion. A plain Pod is its
// own workload: its admission patch carries the narrowing. Private to gpuaas_core.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/base/placement.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::telemetry {
class Counter;
class Registry;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

class DecisionSink;

namespace binding {
using gpuaas::kPlacementGate;  // the webhook's, on the templates (base/placement.hpp)
using gpuaas::kPodSetLabel;
}  // namespace binding

class BindingStage {
 public:
  using json_t = nlohmann::json;
  explicit BindingStage(telemetry::Registry* registry);

  // AdmissionPolicy's placement.binding, bindingByFlavor and bindTimeout.
  void set_policy(const policy::PolicySet& set);
  // The binding of a workload admitted to `flavor` whose kind defaults to `kind_default`.
  policy::Binding mode(const std::string& flavor, policy::Binding kind_default) const;

  // Admission placed the workload: its pod sets' names and where their pods go.
  void placed(const std::string& workload, const admission::Placement& placement,
              const std::vector<std::string>& pod_sets, policy::Binding mode);
  bool has_plan(const std::string& workload) const { return plans_.count(workload) > 0; }
  // The workload stopped, went or was preempted: its plan and its pods' nodes go.
  void forget(const std::string& workload);

  // The merge patch fragment ({"spec": ...}) that narrows a plain Pod (or a pod group's member)
  // being admitted to the node its plan gives it; {} when it has no plan. nullopt: the pod
  // requires another host, so it stays gated, and the refusal is kept for explain.
  std::optional<nlohmann::json> admit_narrowing(const ClusterModel& model, const KubeObject& pod,
                                                const std::string& workload);

  // Pods that changed; the pass looks at their workloads.
  void pod_changed(const ClusterModel& model, const std::string& pod_key);
  // A workload object came or changed: looked at again if its gated pods came before it.
  void workload_changed(const std::string& workload);
  // Opens the gates of the workloads whose pods all exist, one patch per pod. `waits`: the
  // workload is queued and not admitted yet, so its pods stay gated. `plan`: gives a workload
  // without a plan its plan if it has one (a restart, a snapshot). Returns the workloads with a
  // pod still Unschedulable bindTimeout after its gate opened (to requeue), with why.
  std::vector<std::pair<std::string, std::string>> pass(
      const ClusterModel& model, DecisionSink& sink,
      const std::function<bool(const std::string&)>& waits,
      const std::function<bool(const std::string&)>& plan);

  // What a pod bound to a node is to its workload's plan.
  struct Bound {
    bool in_plan = true;    // false: the plan has no room left for it (more pods than placed)
    std::string displaced;  // the planned node it did not go to ("" : it runs where planned)
    int set = -1;           // the index of its pod set in the plan
  };
  // The pod of `workload` (of pod set `set`, "" when unlabelled) is bound to `node`. When it
  // displaced another planned node, the plan follows the pod (its replacement goes where it
  // ran). Without a plan it is in plan: the engine's placement is all there is.
  Bound bound(const std::string& pod_key, const std::string& workload, const std::string& set,
              const std::string& node);
  // binding preferred: the kubernetes.io/hostname values of the workload's planned nodes, for
  // its templates' preferred node affinity; empty otherwise.
  std::vector<std::string> preferred_hostnames(const ClusterModel& model,
                                               const std::string& workload) const;

  // An admitted workload without a plan and no placement in the engine (a restart without a
  // snapshot): the plan read back from the gpuaas.io/placement annotation its admission wrote.
  // False when it has none.
  bool adopt(const ClusterModel& model, const std::string& workload);

  // The node planned for the pod, or "" (explain, tests).
  std::string node_of(const std::string& pod_key) const;
  // A required binding whose gang has not opened because some of its pods do not exist yet:
  // {pods that exist, pods placed}; nullopt otherwise (explain). From the engine's placement,
  // not the plan, so that it reads the same after a snapshot.
  std::optional<std::pair<int64_t, int64_t>> gang_waiting(const ClusterModel& model,
                                                          const std::string& workload,
                                                          const admission::Scheduler& engine) const;
  // Why the pod cannot be bound where it was placed, or nullptr.
  const std::string* refusal(const std::string& pod_key) const;
  // Whether the workload's plan puts a pod of any set on the node (true without a plan: the
  // engine's placement is all there is then).
  bool planned_on(const std::string& workload, const std::string& node) const;

 private:
  struct Slot {
    std::string node;
    int64_t left = 0;  // pods still to be given this node
  };
  struct SetPlan {
    std::string name;
    std::vector<Slot> slots;
  };
  struct Plan {
    policy::Binding mode = policy::Binding::kRequired;
    std::vector<SetPlan> sets;
    int64_t total = 0;
    std::map<std::string, std::pair<std::size_t, std::size_t>> given;  // pod -> (set, slot)
  };

  // A node of the set's plan with room left, taken for the pod; "" when none. `set` empty: the
  // first set with room.
  std::string take_slot(Plan& plan, const std::string& set, const std::string& pod);
  // The set's slot on `node`, added (with no room left) when the plan has none.
  static std::size_t slot_on(SetPlan& set, const std::string& node);
  void give_back(const std::string& pod);
  // Opens the gated pods of one workload when all of its pods exist.
  void bind_workload(const ClusterModel& model, const std::string& workload, DecisionSink& sink);
  void open(const KubeObject& pod, const json_t& spec, const std::string& why, DecisionSink& sink);
  std::string hostname_of(const ClusterModel& model, const std::string& node) const;

  std::map<std::string, Plan> plans_;           // by workload key
  std::map<std::string, std::string> owner_;    // pod key -> workload key, while given a node
  std::map<std::string, std::string> refused_;  // pod key -> why
  std::map<std::string, std::string> sent_;     // pod key -> resourceVersion patched
  std::set<std::string> dirty_;                 // workloads to look at
  std::set<std::string> orphans_;               // gated pods of no workload gpuaasd knows
  std::set<std::string> awaiting_;              // workloads whose gated pods came before them
  // Pods opened onto a node and not bound yet: when their gate opened (the bind timeout).
  std::map<std::string, wire::EventTime> opened_at_;
  void note_opened(const ClusterModel& model, const std::string& pod);
  std::vector<std::pair<std::string, std::string>> timed_out(const ClusterModel& model);
  policy::Binding binding_ = policy::Binding::kKindDefault;
  std::map<std::string, policy::Binding> binding_by_flavor_;
  std::chrono::seconds bind_timeout_{120};
  telemetry::Counter* opened_ = nullptr;
  telemetry::Counter* refused_count_ = nullptr;
  telemetry::Counter* released_unplanned_ = nullptr;
};

}  // namespace gpuaas::core
