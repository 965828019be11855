// CAPACITY: what each service sustains and delivers, read from its replicas' metrics. For every
// serving workload a ServiceObjective selects, each scrape of a replica's series (vLLM's, or the
// names the objective gives) adds its requests, those within the objective (latency and quality)
// and a step towards a window; closed windows (rate, p95s, errors, quality) give the service's
// sustainable rate per replica as the knee of latency against rate (gpuaas_capacity's
// estimate_knee). Requests within objective go to the cost stage as inference outcomes. A
// measurement, not a decision: nothing here acts on the cluster. Private to gpuaas_core.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "capacity/replica_reading.hpp"
#include "gpuaas/capacity/knee.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base
namespace gpuaas::telemetry {
class Registry;
}
namespace gpuaas::core::admission {
class Scheduler;
}

namespace gpuaas::core {

// What one scrape of a serving replica added, for the cost stage.
struct Served {
  std::string pod;       // the pod's model key
  std::string workload;  // its workload's key
  double requests = 0;
  double outcomes = 0;  // within the objective's latency and quality
};

class CapacityStage {
 public:
  explicit CapacityStage(telemetry::Registry* registry);
  ~CapacityStage();

  void set_policy(const policy::PolicySet& set);
  bool watching() const { return !objectives_.empty(); }
  // Pods ("namespace/pod") whose samples changed in this event: their scrapes, read.
  std::vector<Served> after_event(const std::vector<std::string>& touched,
                                  const ClusterModel& model, const admission::Scheduler& engine);

  struct Service {
    std::string objective;  // the ServiceObjective's name
    std::string namespace_, name, kind, cluster_queue;
    std::deque<gpuaas::capacity::Window> windows;     // closed, the last kMaxWindows
    double requests = 0, within = 0, errors = 0;      // since the daemon began measuring
    std::map<std::string, wire::EventTime> replicas;  // pod key -> its last scrape
  };
  // The service a workload key is, or null; its estimate (computed when windows changed).
  const Service* service(const std::string& workload) const;
  const std::map<std::string, Service>& services() const { return services_; }
  gpuaas::capacity::KneeEstimate estimate(const std::string& workload) const;
  // gpuaasctl explain's "serving" section (null JSON text "null" when not a measured service).
  std::string explain_json(const std::string& workload, wire::EventTime now) const;
  void export_metrics(wire::EventTime now) const;

  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  struct Replica {
    std::string workload;
    serving::ReplicaReading last;
    serving::Interval open;  // the window being filled
  };
  const policy::ServiceObjective* objective_for(const KubeObject& workload,
                                                const std::string& cluster_queue) const;
  void close_window(Service& svc, const Replica& r, const policy::ServiceObjective& o);
  void sweep(const ClusterModel& model);  // replicas whose pods are gone

  std::vector<policy::ServiceObjective> objectives_;
  std::unordered_map<std::string, Replica> replicas_;                        // by pod key
  std::map<std::string, Service> services_;                                  // by workload key
  // A cache filled by const readers (metrics export and explain may run at once under the
  // model's shared lock), hence its own mutex.
  mutable std::mutex estimates_mu_;
  mutable std::map<std::string, gpuaas::capacity::KneeEstimate> estimates_;
  wire::EventTime next_sweep_{};
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace gpuaas::core
