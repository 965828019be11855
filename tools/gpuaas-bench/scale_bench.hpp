// gpuaas-bench scale: the NodePool scale-out pass (the daemon's ScaleOutStage: every pool
// planned from the admission engine's node demand, then scale-in) on a large cluster with a
// backlog, in one process: the cluster model and the engine built as the daemon holds them.
#pragma once

#include <cstdint>

namespace gpuaas::bench {

struct ScaleBenchOptions {
  int64_t nodes = 10000;         // GPU nodes, split evenly among the pools
  int64_t pending = 50000;       // workloads waiting for nodes (their quota is there)
  int pools = 4;                 // NodePools, one flavor each
  int tenants = 8;               // ClusterQueues (one cohort); each lists every flavor
  int gpus_per_node = 8;         //
  int passes = 30;               // timed passes of each kind; medians are reported
  uint64_t seed = 1;             //
  double fill = 0.9;             // GPUs held by running work / cluster GPUs
  double deadline_share = 0.05;  // pending workloads with a gpuaas.io/deadline
  double max_nodes_factor = 2;   // each pool's maxNodes / its nodes now
};

// Prints progress on stderr, a summary on stdout and, as the last line, one JSON object.
// Returns the exit code: 1 when the scene is not what was asked (no pass proposed nodes).
int run_scale_bench(const ScaleBenchOptions& o);

}  // namespace gpuaas::bench
