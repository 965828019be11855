// The soak's scenes beyond the two teams: many ClusterQueues in cohorts, a preloaded backlog
// that stays pending, and dcgm-exporter scrapes at their own interval. `--scene large` is 10,000
// nodes, 1,000 ClusterQueues in 100 cohorts, 50,000 pending Jobs, a scrape of every node each
// 30 s and 50 Job arrivals a second (docs/benchmarks.md, The large scene).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "soak_traffic.hpp"

namespace gpuaas::bench {

// Namespace team-k holds LocalQueue `main` of ClusterQueue cq-k.
std::string soak_namespace(int k);

// ClusterQueues cq-0.. (cq-k in cohort-(k % cohorts)), each an equal share of the H100 and A100
// GPUs as nominal quota, BestEffortFIFO, no preemption; one LocalQueue each.
std::string soak_queues_policy_yaml(const SoakMix& m);

// Pods of 8 GPUs a pending Job has: one more than its cohort's largest flavor quota holds, so
// it never fits, even borrowing all of the cohort.
int soak_pending_pods(const SoakMix& m);

// Events per second the mix publishes when scrapes have their own interval: ticks, nine events
// per Job and one scrape per node every scrape_seconds.
double soak_mix_rate(const SoakMix& m);

// Sets the named scene's sizes in `m`, except for the flags `given` says were passed. false:
// no such scene.
bool apply_soak_scene(const std::string& name, SoakMix& m,
                      const std::function<bool(const char* flag)>& given);

// The scene's parameters for the soak's JSON line.
nlohmann::json soak_scene_json(const std::string& name, const SoakMix& m);

}  // namespace gpuaas::bench
