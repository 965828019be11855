// What one simulated run measured: every figure is counted from what happened in the run.
// docs/simulator.md defines each report key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuaas::sim {

struct WaitStats {
  std::vector<double> samples;  // seconds, one per workload that started (or was still waiting)
  double mean() const;
  double percentile(double p) const;  // nearest rank; 0 without samples
};

struct TenantFigures {
  double allocated_gpu_seconds = 0;
  double busy_gpu_seconds = 0;
  double idle_reserved_gpu_seconds = 0;
  int64_t workloads = 0;
  int64_t outcomes = 0;
  int64_t deadline_misses = 0;
  int64_t preemptions = 0;
  int64_t never_started = 0;
  WaitStats queue_wait;
  double cost = 0;  // the tenant's share: its allocated GPU-seconds at the node price
};

// One service's figures (report key "services"): requests, those within its latency objective,
// outcomes (within it and passing its quality), the GPU-seconds its pods held and their cost.
struct ServiceFigures {
  std::string tenant;  // its namespace
  int64_t requests = 0;
  int64_t within_objective = 0;
  double quality = 1.0;
  WaitStats ttft;  // seconds, each request's time to first token (with the latency model)
  double outcomes() const { return static_cast<double>(within_objective) * quality; }
  double allocated_gpu_seconds = 0;
  double cost = 0;  // its allocated GPU-seconds at the run's price per GPU-second
  // KServe's autoscaler: the replicas it asked for each time that changed (seconds since the
  // start, replicas; 0 at zero), and the most replicas ready at once (with the latency model).
  std::vector<std::pair<double, int32_t>> replicas;
  int64_t max_replicas = 0;
};

struct SeriesPoint {
  double t = 0;         // seconds since the scenario start
  int64_t waiting = 0;  // workloads submitted, not running and not finished
  double gpus_allocated = 0;
  double gpus_busy = 0;
  double gpus_capacity = 0;
  int64_t nodes = 0;  // existing (provisioning ones too: they are paid for)
};

// One workload's course through the run (report key "per_workload"): when it was submitted,
// first ran, did its work, and against which deadline. Times are seconds since the start.
struct WorkloadRecord {
  std::string key;  // namespace/name
  std::string kind;
  std::string priority_class;
  double submitted = 0;
  std::optional<double> started;  // every pod first ran: the queue wait ends
  std::optional<double> done;     // the work was done (a job finished, a service served)
  std::optional<double> deadline;
  int64_t preemptions = 0;  // times it was stopped while it ran or started
  bool deadline_missed = false;
};

// One action gpuaasd published during the run (kept with SimOptions::record_decisions).
struct DecisionRecord {
  double t = 0;        // seconds since the start
  std::string target;  // Kind namespace/name
  std::string operation;
  std::string rule;
  std::string reason;
  std::string body;
};

// One node pool's figures (report key "pools").
struct PoolFigures {
  int64_t nodes_launched = 0;         // nodes asked for during the run
  int64_t provisioning_failures = 0;  // removed without ever becoming Ready
  double node_seconds = 0;
  int64_t max_nodes = 0;
};

struct RunResult {
  std::string policy;
  std::string scenario;
  uint64_t seed = 0;
  double simulated_seconds = 0;
  double capacity_gpu_seconds = 0;
  double allocated_gpu_seconds = 0;
  double busy_gpu_seconds = 0;
  double idle_reserved_gpu_seconds = 0;
  double gpu_seconds_at_zero = 0;  // GPUs of workloads scaled to zero, times how long
  WaitStats queue_wait;
  WaitStats wake_latency;  // from the request that woke a service to its pods running
  WaitStats ttft;          // every served request's time to first token (the latency model)
  int64_t wakes = 0;
  int64_t never_started = 0;
  int64_t deadlines = 0;
  int64_t deadline_misses = 0;
  int64_t preemptions = 0;
  int64_t cold_starts = 0;
  double node_seconds = 0;
  int64_t max_nodes = 0;
  int64_t nodes_added = 0;
  int64_t nodes_removed = 0;
  double cost = 0;
  int64_t outcomes = 0;
  int64_t workloads = 0;
  int64_t finished = 0;
  int64_t requests = 0;
  int64_t requests_within_objective = 0;
  int64_t actions = 0;
  std::map<std::string, int64_t> actions_by_rule;  // e.g. "reclaim/idle": gpuaasd's scale to zero
  int64_t events = 0;
  int64_t deadlettered = 0;
  double wall_seconds = 0;
  std::map<std::string, TenantFigures> tenants;
  std::map<std::string, ServiceFigures> services;  // by namespace/name
  std::map<std::string, PoolFigures> pools;
  std::vector<WorkloadRecord> per_workload;  // in the scenario's order
  std::vector<DecisionRecord> decisions;     // empty unless recorded
  std::vector<SeriesPoint> series;
  // gpuaasd's own cost report at the end of the run (`gpuaasctl report --json`), to set beside
  // the simulator's figures: the ledger reads the same pods, samples and reservations.
  std::string daemon_report;

  double gpu_allocation_rate() const;
  double gpu_utilization() const;
  std::optional<double> cost_per_outcome() const;
};

}  // namespace gpuaas::sim
