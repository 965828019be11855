// Reports of simulated runs: JSON with the keys docs/simulator.md documents, and tables a person
// reads at a glance (side by side per policy, then where each tenant's GPUs went).
#pragma once

#include <string>
#include <vector>

#include "gpuaas/sim/run_result.hpp"

namespace gpuaas::sim {

// One run's report object, as JSON text.
std::string report_json(const RunResult& r);
// Several runs: {"scenario": ..., "seed": ..., "runs": [report, ...]}.
std::string compare_json(const std::vector<RunResult>& runs);
// Every recorded decision of the runs, one JSON object a line, in order.
std::string decisions_jsonl(const std::vector<RunResult>& runs);
// The side-by-side table and the per-tenant summary.
std::string report_table(const std::vector<RunResult>& runs);

}  // namespace gpuaas::sim
