// The daemon's model as JSON for `gpuaasctl state`: nodes and their GPUs, GPU pools by product,
// workloads, the clock and the intake's counters. Documented in docs/cli.md.
#pragma once

#include <string>
#include <string_view>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/intake_stats.hpp"

namespace gpuaas::core {

// `cluster_queues_json`: the admission engine's ClusterQueues (a JSON array), "[]" without one;
// `node_pools_json`: the NodePools node scale-out follows (docs/scale-out.md), likewise.
std::string render_state_json(const ClusterModel& model, const IntakeStats& stats,
                              const DaemonConfig& config,
                              const std::string& cluster_queues_json = "[]",
                              const std::string& node_pools_json = "[]");

// What a tenant may see (the API scoped to one namespace, docs/security.md): the clock, the
// namespace's workloads and pod counts, GPU capacity by flavor (totals only) and the given
// ClusterQueues. No nodes, no other namespace, no intake counters, no policy file names.
std::string render_namespace_state_json(const ClusterModel& model, std::string_view ns,
                                        const std::string& cluster_queues_json = "[]");

}  // namespace gpuaas::core
