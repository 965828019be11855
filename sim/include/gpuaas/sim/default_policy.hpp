// The policy a scenario runs with when it names none and --policy gives none: one ResourceFlavor
// per node-pool flavor (nodes labelled gpuaas.io/flavor), one ClusterQueue per namespace with an
// equal share of the GPUs the pools can reach, all in one cohort so that idle quota is lent, a
// LocalQueue for every queue the workloads name, a WorkloadPriorityClass for every priority class
// they name (high 1000, low 10, any other 100), and fair sharing; for serving replays
// (Scenario::gpuaas_scale_to_zero) also an IdleReclaimPolicy for InferenceServices with Knative's
// window and grace and learned arrivals, and a ServiceObjective for them: the scenario's latency
// objective as ttftP95 and, where gpuaasd reads it, a `scaling` section with the rate one replica
// sustains. docs/simulator.md shows it.
#pragma once

#include <vector>

#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/scenario.hpp"

namespace gpuaas::sim {

inline constexpr const char* kFlavorLabel = "gpuaas.io/flavor";

std::vector<PolicyText> default_policy(const Scenario& s);

// The highest Poisson rate at which one replica of the template's speed meets its latency
// objective for 95% of requests: its `slots` as an M/M/k queue whose mean hold is the mean
// request's prefill and answer (sizes from `requests`, else the speed's own), and
// P(wait > objective - mean prefill) <= 5% (Erlang C). 0 without `serving`, or when the mean
// prefill alone misses the objective.
double sustainable_rps_per_replica(const WorkloadTemplate& w,
                                   const std::vector<RequestTokens>& requests);

}  // namespace gpuaas::sim
