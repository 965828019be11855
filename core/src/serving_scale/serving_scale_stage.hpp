// SERVING SCALE: the replicas a service's demand needs at its objective, within its quota. For a
// serving workload whose ServiceObjective has `scaling`, the requests its replicas report (read
// by the capacity stage) give a demand forecast (capacity/demand_forecast.hpp); with the rate one
// replica sustains at the objective (the objective's perReplicaRps, else the measured knee) they
// give the bounds of KServe's autoscaler: scaleTarget, minReplicas and maxReplicas, capped by what
// the ClusterQueue's quota allows (capacity/replica_sizing.hpp). Sent as SET_SCALE when they
// change, with the reason; the idle rules own zero (reclaim/): at zero nothing is sent, and after
// the wake the bounds are sent again. Replicas the forecast needs beyond those running are node
// demand for scale-out. Time is event time. Private to gpuaas_core.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "capacity/capacity_stage.hpp"
#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/capacity/demand_forecast.hpp"
#include "gpuaas/capacity/replica_sizing.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::telemetry {
class Registry;
}

namespace gpuaas::core {

class DecisionSink;
class ReclaimStage;

class ServingScaleStage {
 public:
  ServingScaleStage(telemetry::Registry* registry, WorkloadInterpreter* interpreter);
  ~ServingScaleStage();

  void set_policy(const policy::PolicySet& set);
  bool watching() const { return scaling_; }
  // A workload object came or changed (a candidate when its kind's plugin can set its scale),
  // or went.
  void object_changed(const std::string& key, const KubeObject& obj);
  void forget(const std::string& key);
  // Requests the capacity stage read from the replicas in this event.
  void served(const std::vector<Served>& steps);
  // Every service whose interval came: its demand observed, its bounds sized, sent on change.
  void pass(const ClusterModel& model, const CapacityStage& capacity,
            const admission::Scheduler& engine, const ReclaimStage& reclaim, DecisionSink& sink);
  // Replicas the forecasts need beyond the pods running, as pending node demand (scale-out).
  std::vector<admission::NodeDemand> node_demand() const;
  // gpuaasctl explain's "scale" part of "serving" ("null" when not sized).
  std::string explain_json(const std::string& workload) const;

  struct Service {
    std::string namespace_, name;  // for its series
    gpuaas::capacity::DemandForecast forecast;
    double requests = 0;  // since the last observation
    std::optional<wire::EventTime> observed_at, due;
    double rate = 0;                               // the last observation's
    gpuaas::capacity::Sizing sizing;               // the last sized
    std::optional<gpuaas::capacity::Sizing> sent;  // the bounds in force, as last sent
    std::optional<wire::EventTime> sent_at;
    std::string state;  // "sized" | "idle" | "not admitted" | "no plugin"
    std::optional<admission::NodeDemand> wanting;  // replicas still to come (scale-out)
    // The minimums sized within the scale-down stabilization window: the minimum goes down only
    // to the highest of them (HPA's scaleDown stabilization), so a dip does not churn replicas.
    std::deque<std::pair<wire::EventTime, int>> recent_mins;
  };
  const Service* service(const std::string& key) const;

 private:
  void show(const Service& svc);
  void drop(const std::string& key);
  const policy::ServiceObjective* objective_for(const KubeObject& obj,
                                                const std::string& cluster_queue) const;
  void size(const std::string& key, const KubeObject& obj, Service& svc,
            const policy::ServiceObjective& o, const ClusterModel& model,
            const CapacityStage& capacity, const admission::Scheduler& engine, DecisionSink& sink);

  WorkloadInterpreter* interpreter_;
  std::vector<policy::ServiceObjective> objectives_;  // all, in name order: the first match wins
  bool scaling_ = false;                              // any of them has `scaling`
  std::set<std::string> candidates_;
  std::map<std::string, Service> services_;
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace gpuaas::core
