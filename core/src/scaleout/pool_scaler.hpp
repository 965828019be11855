// Node scale-out and safe scale-in for the NodePools of the policy in force (issue #7). Reads
// the cluster model and the admission engine; its decisions are actions (scale a MachineSet,
// create a ProvisioningRequest, scale a gpuaas.io NodePool, cordon a Node, mark a Machine for
// deletion) plus preemptions of preemptible work on a node being drained. No workload-kind code
// and no bus here: the admission controller publishes what it returns. Time is event time.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "gpuaas/scaleout/demand_trend.hpp"
#include "gpuaas/v1/action.pb.h"
#include "pool_plan.hpp"

namespace gpuaas::telemetry {
class Registry;
class Counter;
class Gauge;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::scaleout {

// Annotations and rules, as written in docs/scale-out.md.
inline constexpr const char* kScaleDownDisabled =
    "cluster-autoscaler.kubernetes.io/scale-down-disabled";
inline constexpr const char* kSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict";
inline constexpr const char* kDeleteMachine = "cluster.x-k8s.io/delete-machine";
inline constexpr const char* kMachineAnnotation = "cluster.x-k8s.io/machine";
inline constexpr const char* kMachineNamespaceAnnotation = "cluster.x-k8s.io/cluster-namespace";
inline constexpr const char* kPreemptibleAnnotation = "gpuaas.io/preemptible";
inline constexpr const char* kScaleInAnnotation = "gpuaas.io/scale-in";

class PoolScaler {
 public:
  struct Output {
    std::vector<v1::Action> actions;             // target, operation, body, reason, rule
    std::vector<admission::Decision> evictions;  // preemptible work on nodes being drained
  };

  explicit PoolScaler(telemetry::Registry* registry = nullptr);
  ~PoolScaler();

  void set_policy(const policy::PolicySet& set);
  bool empty() const { return pools_.empty(); }
  // Looks at the pools when a scan interval of event time has passed since the last look.
  bool due(core::EventTime now) const { return !pools_.empty() && now >= next_scan_; }
  // `waking`: workloads idle reclaim is waking (their GPUs are wanted back at once).
  Output pass(const core::ClusterModel& model, admission::Scheduler& scheduler,
              const std::set<std::string>& waking, core::EventTime now);
  // Being drained or removed: admission places nothing there.
  bool cordoned(const std::string& node) const { return cordoned_.count(node) > 0; }
  // GPUs of the nodes asked for that have not registered yet, per flavor: the cloud bills them
  // while they are provisioned, before any Node object shows them.
  std::map<std::string, int64_t> coming_gpus() const;
  // The pools as JSON (gpuaasctl pools, the admin /pools page).
  std::string json(core::EventTime now) const;

  static constexpr std::chrono::seconds kScanInterval{10};  // cluster-autoscaler's scan interval
  static constexpr std::chrono::seconds kDrainTimeout{600};

 private:
  struct NodeState {
    core::EventTime first_seen{};
    std::optional<core::EventTime> asked_at;  // the scale-up it answered
    bool up = false;                          // has been Ready with GPUs
  };
  struct Drain {
    core::EventTime started{};
  };
  struct Pool {
    policy::NodePool spec;
    int64_t quota_milli = -1;
    std::deque<core::EventTime> asked;  // nodes asked for that have not registered yet
    std::map<std::string, NodeState> nodes;
    std::map<std::string, core::EventTime> unneeded_since;
    std::map<std::string, Drain> draining;
    std::set<std::string> removing;  // removal asked; until the Node is gone
    int64_t launched = 0;
    int64_t failures = 0;
    int64_t requests = 0;  // ProvisioningRequests created (their names)
    core::EventTime backoff_until{};
    std::chrono::seconds backoff_next{0};
    std::optional<core::EventTime> last_scale_up;
    std::optional<core::EventTime> observed_since;  // first look at its nodes
    double lead_seconds = 0;                        // learned provisioning time
    int64_t lead_samples = 0;
    std::unique_ptr<DemandTrend> trend;
    Plan last_plan;
    std::string last_note;  // why it did not scale in, or a give-up
  };

  void scan(Pool& pool, const core::ClusterModel& model, core::EventTime now, Output& out);
  void scale_out(Pool& pool, const PlanInput& in, const Plan& plan, core::EventTime now,
                 Output& out);
  // Pods that hold a node (bound, not finished, not DaemonSet pods), by node name.
  using PodsByNode = std::unordered_map<std::string, std::vector<const core::KubeObject*>>;
  void scale_in(Pool& pool, const core::ClusterModel& model, admission::Scheduler& scheduler,
                const std::vector<admission::NodeDemand>& admitted, const PodsByNode& pods,
                const Plan& plan, core::EventTime now, Output& out);
  // `nodes` given up on; the backoff grows one step per scan.
  void fail(Pool& pool, core::EventTime now, const std::string& what, int64_t nodes);
  // Actions: the pool's replica count, the removal of one named node, a cordon.
  void scale_to(Pool& pool, int32_t replicas, int32_t added, const std::string& rule,
                const std::string& why, core::EventTime now, Output& out);
  // False: the node cannot be named for removal (a MachineSet node without its Machine).
  bool remove_node(Pool& pool, const core::KubeObject& node, const std::string& rule,
                   const std::string& why, core::EventTime now, Output& out);
  void cordon(const core::KubeObject& node, bool on, const std::string& rule,
              const std::string& why, Output& out);
  int32_t replicas(const Pool& pool) const;
  std::chrono::milliseconds lead(const Pool& pool) const;
  bool in_pool(const Pool& pool, const core::KubeObject& node) const;

  std::vector<Pool> pools_;
  std::set<std::string> cordoned_;
  core::EventTime next_scan_{};

  telemetry::Family<telemetry::Gauge>* nodes_gauge_ = nullptr;      // by pool, state
  telemetry::Family<telemetry::Counter>* scale_actions_ = nullptr;  // by pool, direction, rule
  telemetry::Family<telemetry::Counter>* failures_ = nullptr;       // by pool
  telemetry::Family<telemetry::Gauge>* lead_gauge_ = nullptr;       // by pool
  telemetry::Family<telemetry::Gauge>* demand_gauge_ = nullptr;     // by pool, horizon
  telemetry::Family<telemetry::Gauge>* desired_gauge_ = nullptr;    // by pool
};

}  // namespace gpuaas::scaleout
