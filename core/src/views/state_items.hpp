// The items of the state answer, shared by the whole answer (state_view.cpp) and its pages
// (state_pages.cpp): one node, one workload, the clock and the GPU pools by product.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuaas/core/cluster_model.hpp"

namespace gpuaas::core::state_items {

// `gpu_keys`: the metric store's GPU keys ("node/gpu"), sorted; taken once per answer.
nlohmann::json node_json(const ClusterModel& model, const KubeObject& node,
                         const std::vector<std::string>& gpu_keys);
nlohmann::json workload_json(const ClusterModel& model, const std::string& key,
                             const KubeObject& workload);
nlohmann::json clock_json(const ClusterModel& model);
// The daemon's own PolicySet travels as an object; it is no workload to show.
bool is_policy_set(const KubeObject& object);
nlohmann::json gpu_pools_json(const ClusterModel& model);

}  // namespace gpuaas::core::state_items
