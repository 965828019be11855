// gpuaas-bench admission: the admission engine's decision rate and latency on a synthetic GPU
// cluster with a backlog, in one process (no bus, no daemon).
#pragma once

#include <cstdint>

namespace gpuaas::bench {

struct AdmissionBenchOptions {
  int64_t workloads = 5000;  // submitted up front; more than fits, so a backlog stays pending
  int queues = 100;          // ClusterQueues, one LocalQueue (and namespace) each
  int cohorts = 10;          // queues are split evenly among them
  int64_t nodes = 1000;
  int gpus_per_node = 8;
  uint64_t seed = 1;
  int64_t steady = -1;        // steady-state iterations; -1: min(workloads, 20000)
  double quota_ratio = 1.0;   // sum of nominal GPU quota / cluster GPUs
  bool preemption = false;    // withinClusterQueue LowerPriority, reclaimWithinCohort Any
  bool fair_sharing = false;  // AdmissionPolicy fairSharing
  double deadline_share = 0;  // fraction of workloads with a gpuaas.io/deadline
  int64_t step_ms = 1000;     // event time between steady-state iterations
};

// Prints progress on stderr and one JSON line on stdout. Returns the exit code.
int run_admission_bench(const AdmissionBenchOptions& o);

}  // namespace gpuaas::bench
