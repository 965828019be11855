// The latency model (sim/src/serving_queue.hpp): a service's replicas as k request slots each,
// first come first served. On a steady Poisson rate with exponential holds it is M/M/k, so the
// share of requests that wait longer than the objective is Erlang C's; requests that arrive
// before the replicas run wait for them, and their time to first token says so.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gpuaas/capacity/erlang_c.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

namespace gpuaas::sim {
namespace {

using testing::options_for;
using testing::run;
using testing::scenario_of;

// One InferenceService "chat" for an hour on a 4-GPU node; `fields` are its own.
Scenario chat_service(const std::string& fields) {
  return scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 1h
  nodePools: [{name: gpu, flavor: gpu, gpusPerNode: 4, nodes: 1, pricePerNodeHour: 8}]
  workloads:
    - {name: chat, namespace: serving, queue: main, kind: InferenceService, duration: 1h,
       )" + fields + "}\n");
}

// 16 slots, holds of 100 ms on average (exponential: each answer's length drawn), 120 requests
// a second (75 % of k/hold) for an hour, a 20 ms objective on the wait (no prompt: no prefill).
TEST(ServingModelTest, ShareWithinObjectiveIsErlangCsOnASteadyRate) {
  Scenario s = chat_service(R"(startupDelay: 1s, latencyObjective: 20ms, requestRate: 120,
       serving: {slots: 16, prefillTokensPerSecond: 1000, outputTokensPerSecond: 100000})");
  ASSERT_EQ(s.workloads.size(), 1u);
  auto& w = s.workloads[0];
  ASSERT_TRUE(w.arrivals_ms && w.serving);
  // Poisson arrivals from the rate: about 120 x 3600.
  EXPECT_NEAR(static_cast<double>(w.arrivals_ms->size()), 120.0 * 3600,
              3 * std::sqrt(120.0 * 3600));
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> tokens(1.0 / 10000);  // 10,000 tokens: 100 ms
  auto sizes = std::make_shared<std::vector<RequestTokens>>();
  for (std::size_t i = 0; i < w.arrivals_ms->size(); ++i)
    sizes->push_back({0, static_cast<int32_t>(std::lround(tokens(rng)))});
  w.request_tokens = sizes;

  const RunResult r = run(s, options_for(Baseline::kAlwaysOn));
  ASSERT_GT(r.requests, 400000);
  const double within = static_cast<double>(r.requests_within_objective) / r.requests;
  const double late = capacity::wait_exceeds(16, 10.0, 120.0, 0.020);
  std::printf("within the objective: %.4f, Erlang C: %.4f\n", within, 1 - late);
  EXPECT_NEAR(1 - within, late, 0.15 * late);
  ASSERT_EQ(r.ttft.samples.size(), static_cast<std::size_t>(r.requests));
  // Most requests find a free slot: the median waits for nothing.
  EXPECT_LT(r.ttft.percentile(50), 0.001);
}

// A request that arrives while the replicas start waits for them: its time to first token is
// that wait plus its prefill, and it misses a 2 s objective. One after the start does not.
TEST(ServingModelTest, RequestsBeforeTheStartWaitForIt) {
  Scenario s = chat_service(R"(startupDelay: 2m, serving: {slots: 4, prefillTokensPerSecond: 1000,
       outputTokensPerSecond: 50})");
  auto& w = s.workloads[0];
  w.arrivals_ms =
      std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{10'000, 20'000, 600'000});
  w.request_tokens = std::make_shared<const std::vector<RequestTokens>>(
      std::vector<RequestTokens>{{500, 100}, {500, 100}, {500, 100}});
  const RunResult r = run(s, options_for(Baseline::kAlwaysOn));
  EXPECT_EQ(r.requests, 3);
  EXPECT_EQ(r.requests_within_objective, 1);
  ASSERT_EQ(r.ttft.samples.size(), 3u);
  auto t = r.ttft.samples;
  std::sort(t.begin(), t.end());
  EXPECT_NEAR(t[0], 0.5, 1e-9);  // the prefill of 500 tokens at 1,000 a second
  // The start-up (2 min, +-20 %) from the first arrivals, plus the prefill.
  EXPECT_GT(t[1], 96 - 20 + 0.5);
  EXPECT_LT(t[2], 144 - 10 + 0.5);
}

TEST(ServingModelTest, ServingOnlyOnAnInferenceService) {
  auto s = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  workloads:
    - {name: t, namespace: a, queue: q, kind: PyTorchJob, duration: 1h,
       serving: {slots: 4}}
    - {name: c, namespace: a, queue: q, kind: InferenceService, duration: 1h,
       serving: {slots: 0, speed: 3}}
)",
                          "bad.yaml", "");
  ASSERT_FALSE(s.is_ok());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("bad.yaml:6"), std::string::npos) << m;
  EXPECT_NE(m.find("only an InferenceService serves requests"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.workloads[1].serving"), std::string::npos) << m;
}

}  // namespace
}  // namespace gpuaas::sim
