// The placement experiment of the FGD paper (Weng et al., "Beware of Fragmentation", ATC '23) on
// the Alibaba openb trace, played with gpuaas's own placement code (core::admission::NodeIndex):
// pods arrive one by one and never leave, until what they ask reaches a multiple of the cluster's
// GPUs; the figure is the share of the cluster's GPUs allocated. A first-fit baseline runs beside
// it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "gpuaas/sim/alibaba_trace.hpp"

namespace gpuaas::sim {

struct PlacementOptions {
  // Arrivals stop once the GPUs asked reach load x the cluster's GPUs (1.3: the paper's 130%).
  double load = 1.3;
  uint64_t seed = 42;
  // Nodes NodeIndex scores per pod: the AdmissionPolicy default unless the caller says otherwise.
  int candidates = policy::AdmissionPolicy{}.placement_candidates;
};

// One run. GPU amounts are in milli (1000 = one GPU).
struct PlacementResult {
  uint64_t seed = 0;
  double load = 0.0;
  int candidates = 0;
  int64_t gpu_capacity_milli = 0;  // the cluster's GPUs
  int64_t pods_arrived = 0;
  int64_t pods_placed = 0;  // by gpuaas; the others failed and were dropped
  int64_t pods_failed = 0;
  int64_t gpus_requested_milli = 0;  // by all arrived pods, placed or not
  int64_t gpus_allocated_milli = 0;  // by the pods gpuaas placed
  double gpu_allocation_rate = 0.0;  // gpus_allocated_milli / gpu_capacity_milli, 0..1
  // The same arrivals placed first-fit: nodes in trace order, the first devices that fit.
  int64_t first_fit_pods_placed = 0;
  int64_t first_fit_gpus_allocated_milli = 0;
  double first_fit_allocation_rate = 0.0;
  double milliseconds = 0.0;  // wall time of this run, both placers
};

// One run with options.seed. The pods arriving are drawn uniformly WITH replacement from `pods`:
// index = x mod n for the next output x of std::mt19937_64(seed), redrawn while x falls in the
// final incomplete block of n values (so no index is favoured; unlike
// std::uniform_int_distribution, the same on every standard library). Each arrives once and is
// placed at once by NodeIndex::fit (one flavor covering all nodes, a gang of one pod) and commit,
// or fails and is dropped; the pod whose request makes the total asked reach load x capacity is
// the last. Pods without GPUs arrive too (they take CPU and memory). gpu_spec is not honoured (it
// is empty in the default pod list). Errors: no pods, no nodes, no GPUs in the cluster, no pod
// asking for GPUs, a load that is not a positive finite number, candidates < 1, two nodes with
// the same name.
Result<PlacementResult> run_placement_experiment(const std::vector<AlibabaPod>& pods,
                                                 const std::vector<AlibabaNode>& nodes,
                                                 const PlacementOptions& options);

// Runs for seeds first_seed..last_seed (inclusive), with their means.
struct PlacementSeeds {
  double load = 0.0;
  int candidates = 0;
  std::vector<PlacementResult> per_seed;
  double gpu_allocation_rate = 0.0;  // mean over the seeds
  double gpu_allocation_rate_min = 0.0;
  double gpu_allocation_rate_max = 0.0;
  double first_fit_allocation_rate = 0.0;  // mean over the seeds
};

// options.seed is ignored; errors as run_placement_experiment, or last_seed < first_seed.
Result<PlacementSeeds> run_placement_seeds(const std::vector<AlibabaPod>& pods,
                                           const std::vector<AlibabaNode>& nodes,
                                           const PlacementOptions& options, uint64_t first_seed,
                                           uint64_t last_seed);

// The paper's figures at 130% load on the same trace (mean of seeds 42-51), for comparison only:
// they were not measured here.
struct PublishedRate {
  const char* policy;
  double gpu_allocation_rate;
};
const std::vector<PublishedRate>& published_placement_rates();

// The JSON report, one line: {"mode":"placement","load":..,"candidates":..,"seeds":[..],
// "gpu_allocation_rate":<mean>,"gpu_allocation_rate_min":..,"gpu_allocation_rate_max":..,
// "first_fit_allocation_rate":<mean>,"per_seed":[{"seed","gpu_allocation_rate",
// "first_fit_allocation_rate","pods_arrived","pods_placed","pods_failed","gpus_requested",
// "gpus_allocated"}],"published":{policy: rate},"published_source":".."}. Rates are fractions
// (0..1); gpus_requested and gpus_allocated are in GPUs (8075.62), not milli.
std::string placement_report_json(const PlacementSeeds& seeds);
// A short table: the published figures and ours (mean, min-max over seeds), best first.
std::string placement_report_table(const PlacementSeeds& seeds);

}  // namespace gpuaas::sim
