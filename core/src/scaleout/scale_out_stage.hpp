// Node scale-out in the daemon: every scan interval of event time, after admission, the pool
// scaler plans each NodePool from the backlog (NodeClaims, MachineDeployment replicas,
// ProvisioningRequests) and drains nodes for scale-in. Its actions leave through the sink; the
// nodes it cordons and the workloads it drains go back to admission. Private to gpuaas_core.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "scaleout/pool_scaler.hpp"

namespace gpuaas::core {

class DecisionSink;

class ScaleOutStage {
 public:
  explicit ScaleOutStage(telemetry::Registry* registry) : scaler_(registry) {}

  struct Outcome {
    std::vector<std::string> cordoned;           // admission must see them unschedulable now
    std::vector<admission::Decision> evictions;  // preemptible work on nodes being drained
  };

  void set_policy(const policy::PolicySet& set) { scaler_.set_policy(set); }
  bool due(wire::EventTime now) const { return scaler_.due(now); }
  // `waking`: workloads idle reclaim wakes (their GPUs are wanted back at once); `serving`:
  // replicas serving forecasts need beyond those running (pending demand outside the queues).
  Outcome pass(const ClusterModel& model, admission::Scheduler& engine,
               const std::set<std::string>& waking, std::vector<admission::NodeDemand> serving,
               DecisionSink& sink);
  bool cordoned(const std::string& node) const { return scaler_.cordoned(node); }
  std::map<std::string, int64_t> coming_gpus() const { return scaler_.coming_gpus(); }
  const scaleout::PoolScaler& scaler() const { return scaler_; }

  void save_state(base::ArchiveWriter& w) const { scaler_.save_state(w); }
  void load_state(base::ArchiveReader& r) { scaler_.load_state(r); }

 private:
  scaleout::PoolScaler scaler_;
};

}  // namespace gpuaas::core
