// Node and Pod objects as `kubectl get -o json` prints them, for the cluster the simulator plays.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gpuaas/sim/cluster.hpp"

namespace gpuaas::sim {

std::string rfc3339(Time t);

// A Node of its pool: labels, allocatable CPU, memory and GPUs, the Ready condition.
nlohmann::json node_object(const SimNode& n, uint64_t resource_version);
// A Pod owned by its workload (a controller ownerReference), bound or not, Pending or Running.
nlohmann::json pod_object(const SimPod& p, const nlohmann::json& owner, uint64_t resource_version);

}  // namespace gpuaas::sim
