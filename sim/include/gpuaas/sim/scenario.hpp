// A simulation scenario (apiVersion gpuaas.io/v1alpha1, kind Scenario): node pools, workloads and
// the policy files, read from YAML. docs/simulator.md documents every field; errors name
// FILE:LINE:COLUMN.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::sim {

using Millis = std::chrono::milliseconds;

struct NodePoolSpec {
  std::string name;
  std::string flavor;  // a ResourceFlavor of the policies: its nodeLabels go on the nodes
  int32_t gpus_per_node = 8;
  int64_t cpu_milli_per_node = 96000;
  int64_t memory_bytes_per_node = int64_t{1024} << 30;
  int32_t nodes = 0;  // at start
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;  // defaults to `nodes`
  Millis provisioning_time{std::chrono::minutes(10)};
  double price_per_node_hour = 0.0;
  bool fail_provisioning = false;  // new nodes never become Ready (chaos)
  // New nodes register Ready with no allocatable GPUs; the GPUs show up this much later (the
  // device plugin's start-up), as on real GPU nodes.
  Millis gpu_ready_delay{0};
};

// A serving replica's speed, for the latency model (docs/simulator.md): `slots` requests at once
// (an engine's running batch), each holding its slot for its prompt at the prefill rate and for
// its answer at the decode rate. Its time to first token is its wait for a slot plus its prefill.
struct ServingSpeed {
  int32_t slots = 16;
  double prefill_tokens_per_second = 4000;
  double output_tokens_per_second = 30;  // per request
  // Sizes of requests that come without their own (requestRate): every request the same.
  int32_t context_tokens = 1000;
  int32_t generated_tokens = 200;
};

struct RequestTokens {
  int32_t context = 0;
  int32_t generated = 0;
};

struct WorkloadTemplate {
  std::string name;
  std::string namespace_;
  std::string queue;
  std::string kind;
  int32_t pods = 1;
  int64_t gpu_milli_per_pod = 1000;
  int64_t cpu_milli_per_pod = 4000;
  int64_t memory_bytes_per_pod = int64_t{16} << 30;
  Millis submit_at{0};
  Millis duration{std::chrono::hours(1)};  // busy run time once every pod runs
  // Services, clusters and notebooks live on idle after their busy time, until this long after
  // they started (default: duration). Jobs finish after `duration`.
  std::optional<Millis> lifetime;
  std::optional<Millis> deadline;  // from the scenario start
  std::string priority_class;
  int32_t count = 1;
  Millis every{0};
  bool hide_duration = false;
  std::optional<Millis> startup_delay;  // overrides the scenario's
  double utilization = 0.9;             // GPU activity while busy (0..1)
  double request_rate = 0.0;            // InferenceService: requests per second, while it exists
  Millis latency_objective{std::chrono::seconds(2)};
  // Share of answers that pass the service's quality signal (a finish reason, an evaluator):
  // a request within the latency objective is an outcome only when its answer passes too.
  double quality = 1.0;
  // Request arrivals (ms from the scenario start, sorted), from a trace; instead of requestRate.
  std::shared_ptr<const std::vector<int64_t>> arrivals_ms;
  // Each arrival's sizes (same order), from the trace; empty: the speed's fixed sizes.
  std::shared_ptr<const std::vector<RequestTokens>> request_tokens;
  // The latency model: with it, a request is within the objective when its time to first token
  // is; without it, every request that arrives while the service runs is.
  std::optional<ServingSpeed> serving;
  // InferenceService: its autoscaler (KServe's predictor fields; `pods` is minReplicas).
  // max_replicas -1: `pods`, a fixed size; 0: no bound. "" / 0: Knative's default metric.
  int32_t max_replicas = -1;
  std::string scale_metric;
  int32_t scale_target = 0;
  std::string at;  // FILE:LINE where it was written
};

struct Scenario {
  std::string name;
  std::string file;  // where it was read from ("" when from text)
  Millis duration{std::chrono::hours(6)};
  // Event time of the scenario start (deterministic, never the wall clock).
  std::chrono::sys_time<Millis> start;
  std::vector<std::string> policy_files;  // resolved against the scenario's directory
  std::vector<NodePoolSpec> node_pools;
  std::vector<WorkloadTemplate> workloads;
  Millis startup_delay{std::chrono::minutes(2)};  // from admission until every pod runs
  Millis tick_interval{std::chrono::seconds(30)};
  Millis metrics_interval{std::chrono::seconds(60)};
  // Serving replays: the built-in default policy gives the gpuaas run an IdleReclaimPolicy and a
  // ServiceObjective for the InferenceServices (default_policy.hpp).
  bool gpuaas_scale_to_zero = false;
};

// One workload to submit: a template's copy (`count` expanded, names suffixed -1, -2 ...).
struct WorkloadInstance {
  const WorkloadTemplate* spec = nullptr;
  std::string name;
  Millis submit_at{0};
};

Result<Scenario> load_scenario(const std::string& path);
// `name` is used in error messages; relative policy files resolve against `base_dir`.
Result<Scenario> parse_scenario(const std::string& text, const std::string& name,
                                const std::string& base_dir);
// The workloads in submission order (time, then the order written).
std::vector<WorkloadInstance> expand_workloads(const Scenario& s);

// Kinds a scenario may use.
bool known_workload_kind(const std::string& kind);

}  // namespace gpuaas::sim
