// The admission engine's metrics, named as Kueue names them (kueue_* -> gpuaas_*) so dashboards
// and KEDA triggers translate: pending workloads and GPUs, quota figures per ClusterQueue, the
// fair-sharing weighted share (gauges, refreshed before each scrape), and admitted, evicted and
// preempted workloads, decisions by rule and the admission wait (as they happen).
// Labels never name a workload: ClusterQueues, cohorts, flavors, resources and rules are few.
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace gpuaas::core::admission {
class Scheduler;
}
namespace gpuaas::telemetry {
class Counter;
class Gauge;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

class QueueMetrics {
 public:
  explicit QueueMetrics(telemetry::Registry* registry);  // null: counts nothing

  // Sets the gauges from the engine's queues; series of ClusterQueues gone are removed.
  // Thread-safe against itself (scrapes may overlap); the caller keeps the engine still.
  void refresh(const admission::Scheduler& scheduler);

  void admitted(const std::string& cluster_queue, double waited_seconds);
  // A preemption or drain stopped a workload of `cluster_queue`; `preempting_cluster_queue` is
  // empty when no workload asked for the room (a node drained for scale-in).
  void evicted(const std::string& cluster_queue, const std::string& rule,
               const std::string& preempting_cluster_queue);
  // Every action published, by the rule that made it.
  void decision(const std::string& rule);

  // Kueue's reasons for an eviction and a preemption, from our rules.
  static std::string eviction_reason(const std::string& rule);
  static std::string preemption_reason(const std::string& rule);

 private:
  telemetry::Family<telemetry::Gauge>* pending_ = nullptr;
  telemetry::Family<telemetry::Gauge>* pending_gpus_ = nullptr;
  telemetry::Family<telemetry::Gauge>* nominal_ = nullptr;
  telemetry::Family<telemetry::Gauge>* borrowing_limit_ = nullptr;
  telemetry::Family<telemetry::Gauge>* lending_limit_ = nullptr;
  telemetry::Family<telemetry::Gauge>* reservation_ = nullptr;
  telemetry::Family<telemetry::Gauge>* usage_ = nullptr;
  telemetry::Family<telemetry::Gauge>* weighted_share_ = nullptr;
  telemetry::Family<telemetry::Counter>* admitted_ = nullptr;
  telemetry::Family<telemetry::Counter>* evicted_ = nullptr;
  telemetry::Family<telemetry::Counter>* preempted_ = nullptr;
  telemetry::Family<telemetry::Counter>* decisions_ = nullptr;
  telemetry::Family<telemetry::Histogram>* wait_time_ = nullptr;
  std::mutex mu_;
  std::set<telemetry::Gauge*> shown_;  // gauges the last refresh set
};

}  // namespace gpuaas::core
