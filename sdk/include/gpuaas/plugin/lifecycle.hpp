// Builders for lifecycle() answers.
#pragma once

#include <string>

#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin {

v1::WorkloadLifecycle lifecycle(v1::WorkloadLifecycle::State state, std::string reason = {});

}  // namespace gpuaas::plugin
