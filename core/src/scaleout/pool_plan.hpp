// How many nodes one pool should have: a pure function of what its nodes hold, what waits for
// them, the nodes already coming and the demand trend. Private to gpuaas_core (scaleout/).
//
// The plan plays the pool forward on its nodes (each node's free GPUs, admitted work ending at
// its expected end, coming nodes joining when expected, pending work starting in queue order
// where its whole gang fits) and asks three questions:
//   deadline: which pending workloads with a deadline miss it on the nodes there are and coming?
//     The fewest extra nodes that save every deadline that can be saved within maxNodes; none when
//     staggering already meets them all.
//   backlog: which pending workloads without a deadline (or waking from zero) would still wait
//     one provisioning time from now? Their pods packed onto new nodes (first fit decreasing).
//   forecast: does the demand trend outgrow the capacity left over by then?
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"

namespace gpuaas::core::scaleout {

using Millis = std::chrono::milliseconds;
using Time = std::chrono::sys_time<Millis>;

struct PlanNode {
  std::string name;
  int64_t free_milli = 0;   // GPUs not held by pods or placements
  int64_t total_milli = 0;  // allocatable GPUs
};

struct PlanInput {
  Time now{};
  Millis lead{std::chrono::minutes(10)};  // provisioning time (learned)
  int32_t gpus_per_node = 8;
  int32_t nodes = 0;  // the pool's nodes now: registered and asked for, not being removed
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;
  int32_t max_surge = 0;                        // 0: no limit
  std::vector<PlanNode> ready;                  // schedulable, Ready, GPUs allocatable
  std::vector<Time> coming;                     // expected ready time of each node not ready yet
  std::vector<admission::NodeDemand> admitted;  // of this pool's flavor
  std::vector<admission::NodeDemand> pending;   // of this pool's flavor, in queue order
  std::set<std::string> urgent;                 // waking from zero: served like backlog
  std::optional<double> forecast_milli;         // demand expected at now + lead
  int64_t quota_milli = -1;                     // GPU quota of the flavor in all; <0: unknown
};

struct Plan {
  int32_t desired = 0;
  int32_t add_min = 0, add_deadline = 0, add_backlog = 0, add_forecast = 0;
  int32_t keep = 0;           // nodes the demand needs: scale-in never goes below it
  int deadlines_at_risk = 0;  // pending with a deadline that miss it without more nodes
  int deadlines_saved = 0;    // of those, saved by add_deadline
  int backlog_workloads = 0;
  int64_t backlog_milli = 0;
  double demand_milli = 0;  // admitted + pending now
  std::string rule;         // scaleout/deadline, scaleout/backlog, scaleout/wake, ...
  std::string reason;       // for a person: the figures the decision used
};

// Snapshots (gpuaas/base/archive.hpp): the last plan is shown by PoolScaler::json.
template <typename A>
void archive_fields(A& a, Plan& p) {
  a(p.desired, p.add_min, p.add_deadline, p.add_backlog, p.add_forecast, p.keep,
    p.deadlines_at_risk, p.deadlines_saved, p.backlog_workloads, p.backlog_milli, p.demand_milli,
    p.rule, p.reason);
}

// Starts of the pending workloads (parallel to in.pending) with `extra` more nodes ready at
// now + lead; nullopt: never within the plan's horizon.
std::vector<std::optional<Time>> play_forward(const PlanInput& in, int32_t extra);

Plan plan_pool(const PlanInput& in);

}  // namespace gpuaas::core::scaleout
