// Where the GPUs go and what each result costs, read from the cluster model: GPUs
// allocated to pods (their requests), busy (dcgm-exporter's utilisation of the GPUs the pods
// hold), held at zero by idle reclaim (the reservation's GPUs) and charged as OpenCost does
// (max of requested and used, per pod); node GPU capacity for the idle cluster cost; outcomes
// (jobs that succeeded, inference requests within the latency objective, notebook sessions
// used). Metrics and the report read the same ledger. Private to gpuaas_core.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "opencost_prices.hpp"
#include "usage_ledger.hpp"

namespace gpuaas::core::admission {
class Scheduler;
}
namespace gpuaas::core {
struct Served;  // capacity/capacity_stage.hpp
}
namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base
namespace gpuaas::telemetry {
class Counter;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core::cost {

// A flavor's GPU-hour price and where it came from (CostModel, OpenCost, NodePool or none).
struct Price {
  double gpu_hour = 0;
  std::string source = "none";
};
// The prices the admin wrote: the CostModel's, else the NodePool's.
std::map<std::string, Price> resolve_prices(const policy::PolicySet& set);
// The same with OpenCost's per flavor (opencost_prices.hpp) between them: a CostModel price wins,
// OpenCost's fills a flavor without one, a NodePool's is the last resort.
std::map<std::string, Price> resolve_prices(const policy::PolicySet& set,
                                            const std::map<std::string, Price>& opencost);

class GpuAccounting {
 public:
  explicit GpuAccounting(telemetry::Registry* registry);  // null: no metrics
  ~GpuAccounting();
  GpuAccounting(GpuAccounting&&) noexcept;
  GpuAccounting& operator=(GpuAccounting&&) noexcept;

  // A new policy: prices, flavors and outcomes may change; every source is stated again.
  void set_policy(const policy::PolicySet& set);
  // What changed in the event just applied; update() states the sources they touch.
  void node_changed(const std::string& name) { nodes_.insert(name); }
  void pod_changed(const std::string& key) { pods_.insert(key); }
  void decided() { reservations_ = true; }  // parked or woken workloads, asked-for nodes
  // States the changed sources at the model's clock: `coming_gpus` are, per flavor, the GPUs of
  // nodes asked for that have not registered (billed while provisioned).
  // `touched`: pods ("namespace/pod") whose samples changed in the event.
  void update(ClusterModel& model, const admission::Scheduler& scheduler,
              const std::map<std::string, int64_t>& coming_gpus, bool watch_reservations,
              const std::vector<std::string>& touched);
  // A serving replica's scrape read against its ServiceObjective: its requests within the
  // objective are inference outcomes, and its pod's charge is counted for its service too.
  void served(const ClusterModel& model, const admission::Scheduler& scheduler, const Served& s);
  // A workload's lifecycle said Succeeded: one job outcome, once per incarnation (uid).
  void succeeded(const std::string& key, const KubeObject& workload,
                 const std::string& cluster_queue);
  void forget(const std::string& key) { succeeded_.erase(key); }  // the workload is gone

  // Brings the counters up to the ledger at `now`. Thread-safe against itself.
  void export_metrics(wire::EventTime now) const;
  // The per-tenant report (gpuaasctl report --json); `since`: the window, else all time.
  std::string report_json(wire::EventTime now, std::optional<std::chrono::seconds> since) const;

  const UsageLedger& ledger() const { return ledger_; }
  const UsageLedger& service_ledger() const { return service_ledger_; }
  const OpenCostPrices& opencost() const { return opencost_; }
  // Snapshots of the services' part (schema 4 on): their ledger and who they are.
  void save_services(base::ArchiveWriter& w) const;
  void load_services(base::ArchiveReader& r);

  // Snapshots (accounting_snapshot.cpp): the ledger and what the next update states. Prices and
  // the policy are the policy set's: load_state expects a fresh object on which set_policy was
  // called with an equal policy set. The counters /metrics shows are not state: a new process
  // shows the ledger's figures at its first export.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);
  // Moves the state of `other` in, keeping this object's metrics.
  void adopt_state(GpuAccounting&& other);

  // Test seam: when set, every update first hands the object and the policy in force to it, so
  // that tests can swap its state for a copy restored from its snapshot mid-run.
  using UpdateHook = std::function<void(GpuAccounting&, const policy::PolicySet&)>;
  static UpdateHook& update_hook();

 private:
  std::string flavor_of_node(const KubeObject& node) const;
  double price(const std::string& flavor) const;
  void state_pod(const ClusterModel& model, const admission::Scheduler& scheduler,
                 const std::string& key, wire::EventTime now);
  void state_node(const ClusterModel& model, const std::string& name, wire::EventTime now);
  void state_reservations(const ClusterModel& model, const admission::Scheduler& scheduler,
                          wire::EventTime now);
  void inference_pass(const ClusterModel& model, const admission::Scheduler& scheduler);
  RowKey row_of_pod(const ClusterModel& model, const admission::Scheduler& scheduler,
                    const KubeObject& pod, std::string* workload) const;

  void refresh_prices(const ClusterModel& model);
  void export_service_metrics(wire::EventTime now) const;
  void state_service_pod(const std::string& key, const std::string& workload,
                         const std::string& flavor, double gpus, wire::EventTime now);

  UsageLedger ledger_;
  // Per service (rows: namespace, service name): its pods' charge and its outcomes, so that cost
  // per outcome is a service's own, not its tenant's.
  UsageLedger service_ledger_;
  struct ServiceInfo {
    std::string namespace_, name, cluster_queue;
    double requests = 0;  // all time
  };
  std::map<std::string, ServiceInfo> services_;  // workload key -> its service
  std::set<std::string> service_pods_;           // pods with a source in service_ledger_
  OpenCostPrices opencost_;
  policy::PolicySet policy_;  // the set in force
  std::map<std::string, Price> prices_;
  bool restate_all_ = false;
  std::set<std::string> nodes_;  // changed since the last update
  std::set<std::string> pods_;
  bool reservations_ = false;
  std::set<std::string> reserved_;                         // workloads with a reservation source
  std::set<std::string> gpu_pods_;                         // pods with a source
  std::map<std::string, std::string> session_of_pod_;      // pod key -> session workload
  std::map<std::string, std::set<std::string>> sessions_;  // session workload -> its pods
  std::set<std::string> sessions_used_;                    // counted in their current run
  std::map<std::string, std::string> succeeded_;           // workload key -> uid counted
  wire::EventTime next_restate_{};
  std::map<std::string, double> last_bucket_;  // latency bucket series (no le): last value
  std::map<std::string, int64_t> coming_;      // stated provisioning GPUs

  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace gpuaas::core::cost
