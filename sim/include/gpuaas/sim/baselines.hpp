// The policies a run can compare: gpuaas with the policy files as written, and two built-in
// baselines made from the same files, run through the same gpuaasd decision code:
//   static-fifo  every ClusterQueue on its own quota (no cohort, no borrowing, no preemption),
//                StrictFIFO, deadlines ignored, node pools fixed at their start size;
//   kueue-like   cohort borrowing and the queues' own preemption as written, admission on quota
//                alone (pods wait for nodes), deadlines ignored, and cluster-autoscaler's reactive
//                scaling on pending pods;
//   gpuaas       the files as written: placement on nodes, deadlines, fair sharing, and the
//                node-pool scaling gpuaasd asks for.
#pragma once

#include "gpuaas/sim/scenario.hpp"

#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::sim {

// always-on and knative are serving baselines: admission as written (like gpuaas), no
// IdleReclaimPolicy (gpuaas's idle reclaim; static-fifo and kueue-like drop it too), and services
// either never scale to zero (always-on) or do so the way Knative's autoscaler does by default
// (knative; the simulator plays it: docs/simulator.md).
enum class Baseline { kGpuaas, kStaticFifo, kKueueLike, kAlwaysOn, kKnative };

const char* name_of(Baseline b);
// A comma-separated list of names ("static-fifo,kueue-like,gpuaas"); errors name the unknown one.
Result<std::vector<Baseline>> parse_baselines(const std::string& list);
// A sentence on what the baseline does, for --help and the report.
const char* describe(Baseline b);

struct PolicyText {
  std::string name;  // where it came from (a file path, or "built-in default")
  std::string text;  // YAML
};

// The policy texts a baseline runs with, made from the given ones. Errors name FILE:LINE.
Result<std::vector<PolicyText>> policy_for(Baseline b, const std::vector<PolicyText>& policies);
// The gpuaas run scales the scenario's node pools through gpuaasd: a pool whose flavor has no
// NodePool in the policies gets one from the scenario (size bounds, provisioning time, price).
Result<std::vector<PolicyText>> with_node_pools(const std::vector<PolicyText>& policies,
                                                const Scenario& scenario);
// The PolicySet object (the way gpuaasd carries policy through its event stream) for texts that
// must validate together; errors are FILE:LINE:COLUMN lines.
Result<std::string> policy_set_json(const std::vector<PolicyText>& policies);

Result<std::vector<PolicyText>> read_policy_files(const std::vector<std::string>& files);

}  // namespace gpuaas::sim
