// The figures the README and the demo print as wins, each asserted against what it is set beside,
// so that none can regress silently. Each test names where its figure is printed; the tolerances
// are small and one-sided (a better figure passes, a worse one fails).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpuaas/sim/alibaba_trace.hpp"
#include "gpuaas/sim/placement_experiment.hpp"
#include "gpuaas/sim/replay.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

namespace gpuaas::sim {
namespace {

using testing::run;

Scenario demo(const std::string& name) {
  auto s =
      load_scenario(std::string(GPUAAS_SOURCE_DIR) + "/deploy/demo/" + name + "/scenario.yaml");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? std::move(s).value() : Scenario{};
}

double minutes(double seconds) { return seconds / 60; }

// README ("Two commands") and the demo's first table: the simulated day, seed 1.
TEST(HeadlineTest, TheSimulatedDayMeetsEveryDeadlineAndWaitsAndCostsNoMoreThanKueueLike) {
  const Scenario s = demo("day");
  const RunResult kueue = run(s, Baseline::kKueueLike);
  const RunResult gpuaas = run(s, Baseline::kGpuaas);
  ASSERT_EQ(gpuaas.deadlines, 3);
  EXPECT_EQ(gpuaas.deadline_misses, 0);
  int with_deadline = 0;
  for (const auto& w : gpuaas.per_workload) {
    if (!w.deadline) continue;
    ++with_deadline;
    ASSERT_TRUE(w.done.has_value()) << w.key << " never finished";
    EXPECT_LE(*w.done, *w.deadline) << w.key << " finished after its deadline";
    EXPECT_FALSE(w.deadline_missed) << w.key;
  }
  EXPECT_EQ(with_deadline, 3);
  // The baseline without deadlines misses at least one: the win is the comparison.
  EXPECT_GE(kueue.deadline_misses, 1);
  EXPECT_LE(gpuaas.queue_wait.mean(), 1.02 * kueue.queue_wait.mean())
      << minutes(gpuaas.queue_wait.mean()) << " min against " << minutes(kueue.queue_wait.mean());
  EXPECT_LE(gpuaas.cost, kueue.cost);
  EXPECT_GE(gpuaas.outcomes, kueue.outcomes);
  EXPECT_EQ(gpuaas.never_started, 0);
}

// README (node scale-out) and the demo's last table: "waits 6.0 min on average against 11.9
// for a reactive autoscaler, with fewer nodes launched".
TEST(HeadlineTest, TheScaleOutDemoWaitsHalfAsLongAsTheReactiveAutoscaler) {
  const Scenario s = demo("scaleout");
  const RunResult reactive = run(s, Baseline::kKueueLike);
  const RunResult gpuaas = run(s, Baseline::kGpuaas);
  EXPECT_LE(minutes(gpuaas.queue_wait.mean()), 6.0 * 1.05);
  EXPECT_GE(minutes(reactive.queue_wait.mean()), 11.9 * 0.95);
  EXPECT_LE(gpuaas.queue_wait.mean(), 0.55 * reactive.queue_wait.mean());
  int64_t launched_gpuaas = 0, launched_reactive = 0;
  for (const auto& [name, p] : gpuaas.pools) launched_gpuaas += p.nodes_launched;
  for (const auto& [name, p] : reactive.pools) launched_reactive += p.nodes_launched;
  EXPECT_LT(launched_gpuaas, launched_reactive);
  EXPECT_EQ(gpuaas.outcomes, reactive.outcomes);
}

// docs/simulator.md and README ("Using it by hand"): the FGD paper's experiment on the default
// pod list at 130% load, seeds 42-51, places more than FGD's published 95.39%.
TEST(HeadlineTest, PlacementOnTheDefaultListIsPastFgdsPublishedRate) {
  const std::string dir = std::string(GPUAAS_SHARED_DIR) + "/traces/";
  ASSERT_TRUE(std::filesystem::exists(dir + "openb_pod_list_default.csv")) << "no trace in " << dir;
  auto pods = read_alibaba_pods(dir + "openb_pod_list_default.csv");
  auto nodes = read_alibaba_nodes(dir + "openb_node_list_gpu_node.csv");
  ASSERT_TRUE(pods && nodes);
  PlacementOptions o;
  o.load = 1.3;
  auto r = run_placement_seeds(*pods, *nodes, o, 42, 51);
  ASSERT_TRUE(r) << r.status().message();
  double fgd = 0;
  for (const auto& p : published_placement_rates())
    if (std::string(p.policy) == "FGD") fgd = p.gpu_allocation_rate;
  ASSERT_GT(fgd, 0.95);
  EXPECT_GT(r->gpu_allocation_rate, fgd);
  EXPECT_GT(r->gpu_allocation_rate, r->first_fit_allocation_rate);
  RecordProperty("gpu_allocation_rate", std::to_string(r->gpu_allocation_rate));
}

// README (idle reclaim) and docs/idle-reclaim.md: on the Azure LLM trace with 200 services,
// gpuaas (its learned idle timeouts and the replica bounds it sets) has a fifth of the cold
// starts of Knative's defaults and more requests within objective: "11.5 GPU-hours at zero and
// 584 cold starts, against 59.9 and 3178". In Serverless mode Knative removes the last pod, so
// gpuaasd's timeouts can only keep a service longer than Knative's 90 s: less time at zero is
// the price.
TEST(HeadlineTest, AzureTwoHundredServicesFewerColdStartsThanKnative) {
  const std::string file =
      std::string(GPUAAS_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  auto s = azure_llm_scenario(file, 200, 0, 1);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const RunResult knative = run(*s, Baseline::kKnative);
  const RunResult gpuaas = run(*s, Baseline::kGpuaas);
  EXPECT_LE(static_cast<double>(gpuaas.cold_starts), 584 * 1.03);
  EXPECT_GE(gpuaas.gpu_seconds_at_zero / 3600, 11.5 * 0.97);
  EXPECT_NEAR(static_cast<double>(knative.cold_starts), 3178, 3178 * 0.03);
  EXPECT_NEAR(knative.gpu_seconds_at_zero / 3600, 59.9, 59.9 * 0.03);
  EXPECT_LE(gpuaas.cold_starts, 0.25 * static_cast<double>(knative.cold_starts));
  EXPECT_GE(gpuaas.requests_within_objective * knative.requests,
            knative.requests_within_objective * gpuaas.requests);
  EXPECT_EQ(gpuaas.outcomes, knative.outcomes);
}

// docs/simulator.md (Azure figures) and docs/idle-reclaim.md: the Azure LLM trace over 20
// services, in outcome terms: GPU-seconds per request within objective, per policy. With 20
// services the services are rarely idle long enough to go to zero before the trace ends; Knative's
// defaults (70 in flight) keep one replica each, gpuaas's rps target now and then two for the
// busiest, for no request more within objective (what misses is the first two minutes' start).
double gpu_seconds_per_request_within_objective(const RunResult& r) {
  double gpu_seconds = 0;
  for (const auto& [key, s] : r.services) gpu_seconds += s.allocated_gpu_seconds;
  return gpu_seconds / static_cast<double>(r.requests_within_objective);
}

TEST(HeadlineTest, AzureTwentyServicesGpuSecondsPerRequestWithinObjective) {
  const std::string file =
      std::string(GPUAAS_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  auto s = azure_llm_scenario(file, 20, 0, 1);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const RunResult on = run(*s, Baseline::kAlwaysOn);
  const RunResult knative = run(*s, Baseline::kKnative);
  const RunResult gpuaas = run(*s, Baseline::kGpuaas);
  for (const RunResult* r : {&on, &knative, &gpuaas}) {
    EXPECT_EQ(r->requests, 19366) << r->policy;
    EXPECT_NEAR(static_cast<double>(r->requests_within_objective) / 19366, 0.974, 0.002)
        << r->policy;
  }
  EXPECT_NEAR(gpu_seconds_per_request_within_objective(on), 4.03, 0.03);
  EXPECT_NEAR(gpu_seconds_per_request_within_objective(knative), 3.80, 0.03);
  EXPECT_NEAR(gpu_seconds_per_request_within_objective(gpuaas), 3.91, 0.03);
  EXPECT_LT(gpu_seconds_per_request_within_objective(knative),
            gpu_seconds_per_request_within_objective(on));
}

// The demo's last part (deploy/demo/run-demo.sh, "Serving from capacity"): one InferenceService
// takes the whole Azure conversation trace. Knative's defaults (70 requests in flight a replica)
// keep one replica for a load its 32 slots cannot hold at p95 TTFT 2 s: 63.4% of the requests
// within objective. gpuaasd's bounds (SET_SCALE: the rps target one replica sustains there, a
// floor from the forecast, the quota's ceiling) keep 93.7% within it, for 0.000595 per request
// within objective against Knative's 0.000495: meeting the objective takes a second replica.
TEST(HeadlineTest, TheServingDemoMeetsItsObjectiveWithReplicasFromCapacity) {
  const std::string file =
      std::string(GPUAAS_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  auto s = azure_llm_scenario(file, 1, 0, 1);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const RunResult knative = run(*s, Baseline::kKnative);
  const RunResult gpuaas = run(*s, Baseline::kGpuaas);
  auto share = [](const RunResult& r) {
    return static_cast<double>(r.requests_within_objective) / static_cast<double>(r.requests);
  };
  auto cost_per_request = [](const RunResult& r) {
    double cost = 0;
    for (const auto& [key, v] : r.services) cost += v.cost;
    return cost / static_cast<double>(r.requests_within_objective);
  };
  ASSERT_EQ(gpuaas.requests, 19366);
  EXPECT_GE(share(gpuaas), 0.937 - 0.005);
  EXPECT_NEAR(share(knative), 0.634, 0.01);
  EXPECT_LE(cost_per_request(gpuaas), 0.000595 * 1.03);
  EXPECT_NEAR(cost_per_request(knative), 0.000495, 0.000495 * 0.03);
  // The replicas followed gpuaasd's bounds: it sent them, and the service ran more than one.
  EXPECT_GE(gpuaas.actions_by_rule.count("serving/scale")
                ? gpuaas.actions_by_rule.at("serving/scale")
                : 0,
            2);
  ASSERT_EQ(gpuaas.services.size(), 1u);
  EXPECT_GE(gpuaas.services.begin()->second.max_replicas, 2);
}

}  // namespace
}  // namespace gpuaas::sim
