// What the kserve plugin answers, one function per question; plugin.cpp binds them to the SDK.
#pragma once

#include "config.hpp"
#include "gpuaas/plugin/patch.hpp"
#include "gpuaas/plugin/samples.hpp"
#include "gpuaas/plugin/workload.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::kserve {

v1::WorkloadDemand demand(const plugin::Workload& w, const Config& config);
v1::WorkloadLifecycle lifecycle(const plugin::Workload& w);

plugin::Patch admit(const plugin::Workload& w, const v1::ActionRequest& r, const Config& config);
plugin::Patch suspend(const plugin::Workload& w, const Config& config);
plugin::Patch scale_to_zero(const plugin::Workload& w, const Config& config);
plugin::Patch scale_back(const plugin::Workload& w, const Config& config);
plugin::Patch set_scale(const plugin::Workload& w, const v1::ActionRequest& r,
                        const Config& config);

v1::WorkloadActivity activity(const plugin::Workload& w, const plugin::Samples& samples,
                              const Config& config);

}  // namespace gpuaas::kserve
