// Whether a gpuaas policy's selector (IdleReclaimPolicy, NotebookPolicy, ServiceObjective) picks a
// workload: every list that is not empty must hold the workload's value. Private to gpuaas_core.
#pragma once

#include <string>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core {

bool selector_matches(const policy::WorkloadSelector& sel, const KubeObject& obj,
                      const std::string& cluster_queue);

}  // namespace gpuaas::core
