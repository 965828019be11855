// Where the GPUs go and what each result costs (issue #8), read from the cluster model: GPUs
// allocated to pods (their requests), busy (dcgm-exporter's utilisation of the GPUs the pods
// hold), held at zero by idle reclaim (the reservation's GPUs) and charged as OpenCost does
// (max of requested and used, per pod); node GPU capacity for the idle cluster cost; outcomes
// (jobs that succeeded, inference requests within the latency objective, notebook sessions
// used). Metrics and the report read the same ledger. Private to gpuaas_core.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "usage_ledger.hpp"

namespace gpuaas::admission {
class Scheduler;
}
namespace gpuaas::telemetry {
class Counter;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core::accounting {

// A flavor's GPU-hour price and where it came from (CostModel, NodePool or none).
struct Price {
  double gpu_hour = 0;
  std::string source = "none";
};
std::map<std::string, Price> resolve_prices(const policy::PolicySet& set);

class GpuAccounting {
 public:
  static constexpr auto kInterval = std::chrono::seconds(10);

  explicit GpuAccounting(telemetry::Registry* registry);  // null: no metrics
  ~GpuAccounting();

  void set_policy(const policy::PolicySet& set);
  // Something the rates read changed (pods, nodes, samples, decisions): state them again
  // before the next event moves the clock, so each rate starts when its change happened.
  void mark_dirty() { dirty_ = true; }
  bool due(EventTime now) const { return dirty_ || now >= next_; }
  // States the rates in force from the model and the engine; `coming_gpus`: per flavor, GPUs of
  // nodes asked for that have not registered (billed while provisioned).
  void pass(const ClusterModel& model, const admission::Scheduler& scheduler,
            const std::map<std::string, int64_t>& coming_gpus, EventTime now);
  // A workload's lifecycle said Succeeded: one job outcome, once per incarnation (uid).
  void succeeded(const KubeObject& workload, const std::string& cluster_queue);
  void forget(const std::string& key);  // the workload is gone

  // Brings the counters up to the ledger at `now`. Thread-safe against itself.
  void export_metrics(EventTime now) const;
  // The per-tenant report (gpuaasctl report --json); `since`: the window, else all time.
  std::string report_json(EventTime now, std::optional<std::chrono::seconds> since) const;

  const UsageLedger& ledger() const { return ledger_; }

 private:
  std::string flavor_of_node(const KubeObject& node) const;
  double price(const std::string& flavor) const;
  void pods_pass(const ClusterModel& model, const admission::Scheduler& scheduler, EventTime now);
  void inference_pass(const ClusterModel& model, const admission::Scheduler& scheduler);
  RowKey row_of_pod(const ClusterModel& model, const admission::Scheduler& scheduler,
                    const KubeObject& pod, std::string* workload) const;

  UsageLedger ledger_;
  EventTime next_{};
  bool dirty_ = false;
  policy::PolicySet policy_;  // the set in force
  std::map<std::string, Price> prices_;
  std::map<std::string, std::string> node_flavor_;       // cache per pass
  std::set<std::string> succeeded_;                      // "key@uid" counted
  std::set<std::string> sessions_used_;                  // session workloads counted in this run
  std::unordered_map<std::string, double> last_bucket_;  // latency bucket series: last value

  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace gpuaas::core::accounting
