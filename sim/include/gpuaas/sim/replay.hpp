// Real traces as scenarios, so they run through the same simulation and report:
//  - Alibaba GPU trace 2023 (openb): each pod is a one-pod Job submitted at its creation_time
//    that runs (deletion_time - scheduled_time), or (deletion_time - creation_time) for pods the
//    trace never scheduled, at least a minute; its namespace is its qos class as a tenant
//    (tenant_of_qos); nodes are the trace's, one node pool per GPU model and node shape, all of
//    one ResourceFlavor "openb"; the built-in default policy gives each tenant an equal share
//    in one cohort. Times are shifted so the first pod arrives at 0. The trace has no prices.
//  - Azure LLM inference trace 2023: `services` InferenceServices of one GPU each take the
//    requests by popularity: service i (from 0) has weight 1/(i+1) and each request's service is
//    a seeded draw with those weights, so a few are busy and most are often idle. They are
//    submitted at 0 and kept for the whole trace; a request is in time when its service is
//    running when it arrives (or starts within the latency objective).
#pragma once

#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/sim/scenario.hpp"

namespace gpuaas::sim {

// hours > 0: only the first `hours` of the trace (after `from_hours`: the pods created before
// are left out and the replay starts there).
// `elastic`: the cluster starts empty and each node shape is a pool (and a flavor) of its own
// that may grow to the trace's count of that shape, with `provisioning` per node: a what-if for
// node scaling, instead of the fixed cluster the trace ran on.
Result<Scenario> alibaba_scenario(const std::string& pods_csv, const std::string& nodes_csv,
                                  double hours, bool elastic = false,
                                  Millis provisioning = std::chrono::minutes(10),
                                  double from_hours = 0);
Result<Scenario> azure_llm_scenario(const std::string& csv, int services, double hours,
                                    uint64_t seed = 1);

}  // namespace gpuaas::sim
