// Reader for the Alibaba GPU cluster trace 2023 (openb, Weng et al., ATC '23): the pod list and the
// node list, as CSV. Strict: a wrong header, a short row or a bad number is an error naming the
// file and line, never a row quietly skipped, so that a figure computed from the trace is from all
// of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::sim {

// One row of openb_pod_list_*.csv. Times are seconds from the trace start.
struct AlibabaPod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t num_gpu = 0;    // GPU count
  int64_t gpu_milli = 0;  // with num_gpu == 1: the share of one GPU (< 1000: GPU sharing)
  std::string gpu_spec;   // GPU models the pod accepts, "" for any (empty in the default list)
  std::string qos;        // LS, BE, Burstable or Guaranteed
  std::string pod_phase;  // Running, Pending, Succeeded, Failed
  int64_t creation_time = 0;
  int64_t deletion_time = 0;
  std::optional<int64_t> scheduled_time;  // empty for pods never scheduled

  // The GPUs the pod asks for, in milli: a share of one GPU when num_gpu is 1, whole GPUs else.
  int64_t gpu_request_milli() const {
    if (num_gpu == 0) return 0;
    return num_gpu == 1 ? gpu_milli : num_gpu * 1000;
  }
};

// One row of openb_node_list_*.csv.
struct AlibabaNode {
  std::string sn;  // the node's name
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t gpus = 0;
  std::string model;  // G2, T4, P100, V100M16, ...
};

// The pods of a pod list, in file order. Errors: the file cannot be opened or is empty, the header
// is not `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time`, a row has another number of cells, a number is not a
// non-negative integer, or a pod with num_gpu 1 has gpu_milli outside 1..1000.
Result<std::vector<AlibabaPod>> read_alibaba_pods(const std::string& path);
// The nodes of a node list (`sn,cpu_milli,memory_mib,gpu,model`), in file order; errors as above.
Result<std::vector<AlibabaNode>> read_alibaba_nodes(const std::string& path);

// The tenant (namespace) a trace replay puts a pod in. The trace has no user or tenant column;
// qos is its only grouping, so each class stands for one tenant: LS -> "latency-sensitive",
// BE -> "best-effort", Burstable -> "burstable", Guaranteed -> "guaranteed", anything else
// lowercased (still a valid namespace for the trace's values).
std::string tenant_of_qos(const std::string& qos);

}  // namespace gpuaas::sim
