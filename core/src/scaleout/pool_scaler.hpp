// Node scale-out and safe scale-in for the NodePools of the policy in force. Reads
// the cluster model and the admission engine; its decisions are actions (scale a MachineSet,
// create a ProvisioningRequest, scale a gpuaas.io NodePool, cordon a Node, mark a Machine for
// deletion) plus preemptions of preemptible work on a node being drained. No workload-kind code
// and no bus here: the admission controller publishes what it returns. Time is event time.
#pragma once

#include <array>
#include <deque>
#include <functional>
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

namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base

namespace gpuaas::core::scaleout {

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
  PoolScaler(PoolScaler&&) noexcept;
  PoolScaler& operator=(PoolScaler&&) noexcept;

  void set_policy(const policy::PolicySet& set);
  bool empty() const { return pools_.empty(); }
  // Looks at the pools when a scan interval of event time has passed since the last look.
  bool due(wire::EventTime now) const { return !pools_.empty() && now >= next_scan_; }
  // `waking`: workloads idle reclaim is waking (their GPUs are wanted back at once); `serving`:
  // replicas serving forecasts need beyond those running, pending after the queues' own work.
  Output pass(const core::ClusterModel& model, admission::Scheduler& scheduler,
              const std::set<std::string>& waking, wire::EventTime now,
              std::vector<admission::NodeDemand> serving = {});
  // Being drained or removed: admission places nothing there.
  bool cordoned(const std::string& node) const { return cordoned_.count(node) > 0; }
  // GPUs of the nodes asked for that have not registered yet, per flavor: the cloud bills them
  // while they are provisioned, before any Node object shows them.
  std::map<std::string, int64_t> coming_gpus() const;
  // The pools as JSON (gpuaasctl pools, the admin /pools page).
  std::string json(wire::EventTime now) const;

  // Snapshots (pool_scaler_snapshot.cpp): what each pool learned, asked for and is doing, the
  // cordons and the next scan. The pools' specs come from the policy: load_state expects a fresh
  // scaler on which set_policy was called with an equal policy set, and fails when the pools
  // differ. The telemetry is the scaler's own: its gauges are set again at the next pass, its
  // counters raised on load by what the original's were.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);
  // Moves the state of `other` in, keeping this scaler's telemetry.
  void adopt_state(PoolScaler&& other);

  // Test seam: when set, every pass first hands the scaler and the policy in force to it, so
  // that tests can swap its state for a copy restored from its snapshot mid-run.
  using PassHook = std::function<void(PoolScaler&, const policy::PolicySet&)>;
  static PassHook& pass_hook();

  static constexpr std::chrono::seconds kScanInterval{10};  // cluster-autoscaler's scan interval
  static constexpr std::chrono::seconds kDrainTimeout{600};

 private:
  struct NodeState {
    wire::EventTime first_seen{};
    std::optional<wire::EventTime> asked_at;  // the scale-up it answered
    bool up = false;                          // has been Ready with GPUs
    template <typename A>
    friend void archive_fields(A& a, NodeState& s) {
      a(s.first_seen, s.asked_at, s.up);
    }
  };
  struct Drain {
    wire::EventTime started{};
    template <typename A>
    friend void archive_fields(A& a, Drain& d) {
      a(d.started);
    }
  };
  struct Pool {
    policy::NodePool spec;
    int64_t quota_milli = -1;
    std::deque<wire::EventTime> asked;  // nodes asked for that have not registered yet
    std::map<std::string, NodeState> nodes;
    std::map<std::string, wire::EventTime> unneeded_since;
    std::map<std::string, Drain> draining;
    std::set<std::string> removing;  // removal asked; until the Node is gone
    int64_t launched = 0;
    int64_t failures = 0;
    int64_t requests = 0;  // ProvisioningRequests created (their names)
    wire::EventTime backoff_until{};
    std::chrono::seconds backoff_next{0};
    std::optional<wire::EventTime> last_scale_up;
    std::optional<wire::EventTime> observed_since;  // first look at its nodes
    double lead_seconds = 0;                        // learned provisioning time
    int64_t lead_samples = 0;
    std::unique_ptr<DemandTrend> trend;
    Plan last_plan;
    std::string last_note;  // why it did not scale in, or a give-up
  };

  template <typename A>
  static void archive_pool(A& a, Pool& p);
  void scan(Pool& pool, const core::ClusterModel& model, wire::EventTime now, Output& out);
  void scale_out(Pool& pool, const PlanInput& in, const Plan& plan, wire::EventTime now,
                 Output& out);
  // Pods that hold a node (bound, not finished, not DaemonSet pods), by node name.
  using PodsByNode = std::unordered_map<std::string, std::vector<const core::KubeObject*>>;
  void scale_in(Pool& pool, const core::ClusterModel& model, admission::Scheduler& scheduler,
                const std::vector<admission::NodeDemand>& admitted, const PodsByNode& pods,
                const Plan& plan, wire::EventTime now, Output& out);
  // `nodes` given up on; the backoff grows one step per scan.
  void fail(Pool& pool, wire::EventTime now, const std::string& what, int64_t nodes);
  // Actions: the pool's replica count, the removal of one named node, a cordon.
  void scale_to(Pool& pool, int32_t replicas, int32_t added, const std::string& rule,
                const std::string& why, wire::EventTime now, Output& out);
  // False: the node cannot be named for removal (a MachineSet node without its Machine).
  bool remove_node(Pool& pool, const core::KubeObject& node, const std::string& rule,
                   const std::string& why, wire::EventTime now, Output& out);
  void cordon(const core::KubeObject& node, bool on, const std::string& rule,
              const std::string& why, Output& out);
  // The counters below, raised by `n` and remembered (for snapshots).
  void count_scale_action(const std::string& pool, const std::string& direction,
                          const std::string& rule, double n = 1);
  void count_failures(const std::string& pool, double n);
  int32_t replicas(const Pool& pool) const;
  std::chrono::milliseconds lead(const Pool& pool) const;
  bool in_pool(const Pool& pool, const core::KubeObject& node) const;

  std::vector<Pool> pools_;
  std::set<std::string> cordoned_;
  wire::EventTime next_scan_{};
  // What the counters were raised by, by their labels (pool, direction, rule) and (pool): a
  // restored scaler raises its new counters by as much, so /metrics shows the same totals.
  std::map<std::array<std::string, 3>, double> scale_counts_;
  std::map<std::string, double> failure_counts_;

  telemetry::Family<telemetry::Gauge>* nodes_gauge_ = nullptr;      // by pool, state
  telemetry::Family<telemetry::Counter>* scale_actions_ = nullptr;  // by pool, direction, rule
  telemetry::Family<telemetry::Counter>* failures_ = nullptr;       // by pool
  telemetry::Family<telemetry::Gauge>* lead_gauge_ = nullptr;       // by pool
  telemetry::Family<telemetry::Gauge>* demand_gauge_ = nullptr;     // by pool, horizon
  telemetry::Family<telemetry::Gauge>* desired_gauge_ = nullptr;    // by pool
};

}  // namespace gpuaas::core::scaleout
