// --chart: an SVG of the runs over time, one panel per measure (workloads waiting, GPUs
// allocated, GPUs busy, nodes), one line per policy.
#pragma once

#include <string>
#include <vector>

#include "gpuaas/sim/run_result.hpp"

namespace gpuaas::sim {

std::string chart_svg(const std::vector<RunResult>& runs);

}  // namespace gpuaas::sim
