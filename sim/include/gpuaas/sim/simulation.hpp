// One simulated run of a scenario under one policy: the simulator plays the cluster (nodes, pods,
// operators, node pools, users submitting and deleting work) and gpuaasd decides, through the
// bus, in virtual time. The same scenario, policy and seed give the same result.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/run_result.hpp"
#include "gpuaas/sim/scenario.hpp"

namespace gpuaas::sim {

struct SimOptions {
  uint64_t seed = 1;
  std::string server;       // "": in-process bus; else a NATS URL
  std::string plugins_dir;  // the workload plugins
  Baseline policy = Baseline::kGpuaas;
  // gpuaas's policy texts (the baselines are made from them); empty: the scenario's files, else
  // the built-in default (default_policy.hpp).
  std::vector<PolicyText> policies;
  bool record_decisions = false;  // keep every action in RunResult::decisions
  int series_points = 240;        // samples over the run, for the chart
  // Called now and then with the share of virtual time done (0..1).
  std::function<void(double)> progress;
};

Result<RunResult> run_simulation(const Scenario& scenario, const SimOptions& options);

}  // namespace gpuaas::sim
