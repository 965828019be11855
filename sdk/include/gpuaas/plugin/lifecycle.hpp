// Builders for lifecycle() answers.
#pragma once

#include <string>
#include <string_view>

#include "gpuaas/plugin/workload.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin {

v1::WorkloadLifecycle lifecycle(v1::WorkloadLifecycle::State state, std::string reason = {});

// A condition for a lifecycle reason: its type and the controller's reason when that says more,
// "Failed: BackoffLimitExceeded"; the type alone when there is no such condition.
std::string describe_condition(const Workload& w, std::string_view type);

}  // namespace gpuaas::plugin
