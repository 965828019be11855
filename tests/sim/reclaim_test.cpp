// gpuaas's idle reclaim in the simulator: the serving replays' policies (an IdleReclaimPolicy for
// the gpuaas run only), and whole runs where gpuaasd scales services to zero and back. Those runs
// need the daemon's idle reclaim, which a build may leave out: until it emits a SCALE_TO_ZERO
// (rule reclaim/idle) they are skipped, with a message.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/default_policy.hpp"
#include "gpuaas/sim/replay.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

namespace gpuaas::sim {
namespace {

using testing::options_for;
using testing::run;
using testing::scenario_of;

// Like an Azure replay (gpuaas owns scale to zero), on synthetic arrivals: three services, 1 h.
// chat: a request a second for the first minute, nothing for half an hour, a minute again;
// rare: one request every ten minutes; busy: a request every 5 s throughout.
Scenario serving_replay() {
  auto parsed = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 1h
  nodePools: [{name: gpu, flavor: gpu, gpusPerNode: 4, nodes: 1}]
  workloads:
    - {name: chat, namespace: llm, queue: serving, kind: InferenceService, duration: 1h}
    - {name: rare, namespace: llm, queue: serving, kind: InferenceService, duration: 1h}
    - {name: busy, namespace: llm, queue: serving, kind: InferenceService, duration: 1h}
)",
                               "serving.yaml", "");
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  if (!parsed.is_ok()) return {};
  Scenario s = std::move(parsed).value();
  s.gpuaas_scale_to_zero = true;
  auto chat = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 5'000; t < 65'000; t += 1000) chat->push_back(t);
  for (int64_t t = 1'800'000; t < 1'860'000; t += 1000) chat->push_back(t);
  auto rare = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 300'000; t < 3'600'000; t += 600'000) rare->push_back(t);
  auto busy = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 1'000; t < 3'600'000; t += 5'000) busy->push_back(t);
  s.workloads[0].arrivals_ms = chat;
  s.workloads[1].arrivals_ms = rare;
  s.workloads[2].arrivals_ms = busy;
  return s;
}

int64_t requests_of(const Scenario& s) {
  int64_t n = 0;
  for (const auto& w : s.workloads) n += static_cast<int64_t>(w.arrivals_ms->size());
  return n;
}

bool has_idle_reclaim(const std::vector<PolicyText>& texts) {
  for (const auto& t : texts)
    if (t.text.find("IdleReclaimPolicy") != std::string::npos) return true;
  return false;
}

TEST(ReclaimPolicyTest, ServingReplaysReclaimUnderGpuaasOnly) {
  const Scenario s = serving_replay();
  const auto base = default_policy(s);
  ASSERT_EQ(base.size(), 1u);
  const std::string& y = base[0].text;
  EXPECT_NE(y.find("kind: IdleReclaimPolicy"), std::string::npos) << y;
  EXPECT_NE(y.find("kinds: [InferenceService]"), std::string::npos);
  EXPECT_NE(y.find("window: 60s"), std::string::npos);
  EXPECT_NE(y.find("gracePeriod: 30s"), std::string::npos);
  EXPECT_NE(y.find("minRuntime: 0s"), std::string::npos);
  EXPECT_NE(y.find("cooldown: 0s"), std::string::npos);
  EXPECT_TRUE(policy_set_json(base).is_ok());
  for (Baseline b :
       {Baseline::kAlwaysOn, Baseline::kKnative, Baseline::kStaticFifo, Baseline::kKueueLike}) {
    auto texts = policy_for(b, base);
    ASSERT_TRUE(texts.is_ok()) << texts.status().message();
    EXPECT_FALSE(has_idle_reclaim(*texts)) << name_of(b);
    EXPECT_TRUE(policy_set_json(*texts).is_ok()) << name_of(b);
  }
  auto gpuaas = policy_for(Baseline::kGpuaas, base);
  ASSERT_TRUE(gpuaas.is_ok());
  EXPECT_TRUE(has_idle_reclaim(*gpuaas));
  // Other scenarios' default policy has none.
  Scenario plain = s;
  plain.gpuaas_scale_to_zero = false;
  EXPECT_FALSE(has_idle_reclaim(default_policy(plain)));
}

TEST(ReclaimPolicyTest, AzureReplaysLetGpuaasScaleToZero) {
  const std::string file =
      std::string(GPUAAS_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  auto s = azure_llm_scenario(file, 2, 0.05);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_TRUE(s->gpuaas_scale_to_zero);
}

// The baselines are not touched by the IdleReclaimPolicy: gpuaasd reclaims nothing there.
TEST(ReclaimSimulationTest, BaselinesIgnoreIdleReclaim) {
  const Scenario s = serving_replay();
  const RunResult on = run(s, Baseline::kAlwaysOn);
  EXPECT_EQ(on.actions_by_rule.count("reclaim/idle"), 0u);
  EXPECT_DOUBLE_EQ(on.gpu_seconds_at_zero, 0.0);
  EXPECT_EQ(on.requests, requests_of(s));
  const RunResult kn = run(s, Baseline::kKnative);
  EXPECT_EQ(kn.actions_by_rule.count("reclaim/idle"), 0u);
  EXPECT_GT(kn.gpu_seconds_at_zero, 0.0);
  EXPECT_DOUBLE_EQ(kn.idle_reserved_gpu_seconds, kn.gpu_seconds_at_zero);  // Knative keeps quota
  EXPECT_EQ(kn.requests, requests_of(s));
}

TEST(ReclaimSimulationTest, GpuaasScalesIdleServicesToZeroAndWakesThemOnARequest) {
  const Scenario s = serving_replay();
  const RunResult r = run(s, Baseline::kGpuaas);
  if (r.actions_by_rule.count("reclaim/idle") == 0)
    GTEST_SKIP() << "gpuaasd emitted no SCALE_TO_ZERO (rule reclaim/idle): its idle reclaim "
                    "(issue #6) is not in this build";
  EXPECT_GT(r.gpu_seconds_at_zero, 0.0);
  // Quota held at zero is part of the time at zero, never more.
  EXPECT_LE(r.idle_reserved_gpu_seconds, r.gpu_seconds_at_zero + 1e-6);
  EXPECT_EQ(r.requests, requests_of(s));  // every request is answered, cold or not
  EXPECT_EQ(r.outcomes, 3);
  // chat's second burst finds it at zero; gpuaasd wakes it on the request the ingress reports at
  // once: a wake takes about a start-up delay (2 min +-20%), not a metrics interval more. A wake
  // gpuaasd sends back to zero before the pods run has no latency.
  EXPECT_GE(r.wakes, 1);
  EXPECT_LE(r.wake_latency.samples.size(), static_cast<std::size_t>(r.wakes));
  EXPECT_GT(r.cold_starts, 0);
  for (double l : r.wake_latency.samples) EXPECT_LE(l, 150.0);
  // The busy service is never idle: no more wakes than chat's and rare's requests after a gap.
  EXPECT_LE(r.wakes, 1 + 6);
  const RunResult on = run(s, Baseline::kAlwaysOn);
  EXPECT_LT(r.allocated_gpu_seconds, on.allocated_gpu_seconds);
}

// A Ray cluster busy for 10 minutes and kept for an hour: gpuaasd scales its idle workers to zero
// (the head stays); it is not a preemption, and without requests nothing wakes it.
TEST(ReclaimSimulationTest, GpuaasScalesAnIdleRayClusterToItsHead) {
  auto parsed = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 1h
  nodePools: [{name: gpu, flavor: gpu, gpusPerNode: 4, nodes: 1}]
  workloads:
    - {name: ray, namespace: research, queue: main, kind: RayCluster, pods: 2, duration: 10m,
       lifetime: 50m}
)",
                               "ray.yaml", "");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  const Scenario& s = *parsed;
  SimOptions o = options_for(Baseline::kGpuaas);
  o.policies = default_policy(s);
  o.policies.push_back({"idle-ray.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: idle-ray}
spec:
  selector: {kinds: [RayCluster]}
  idle: {window: 5m}
  action: ScaleToZero
  minRuntime: 0s
  cooldown: 0s
)"});
  auto r = run_simulation(s, o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  if (r->actions_by_rule.count("reclaim/idle") == 0)
    GTEST_SKIP() << "gpuaasd emitted no SCALE_TO_ZERO (rule reclaim/idle): its idle reclaim "
                    "(issue #6) is not in this build";
  // Two GPUs at zero from some minutes after the busy 10 minutes until the deletion at ~52 min.
  EXPECT_GT(r->gpu_seconds_at_zero, 2 * 20 * 60.0);
  EXPECT_LT(r->gpu_seconds_at_zero, 2 * 45 * 60.0);
  EXPECT_EQ(r->wakes, 0);
  EXPECT_EQ(r->preemptions, 0);
  EXPECT_EQ(r->outcomes, 1);
  SimOptions plain = options_for(Baseline::kGpuaas);
  plain.policies = default_policy(s);
  auto kept = run_simulation(s, plain);
  ASSERT_TRUE(kept.is_ok());
  EXPECT_NEAR(r->allocated_gpu_seconds, kept->allocated_gpu_seconds - r->gpu_seconds_at_zero, 1.0);
}

}  // namespace
}  // namespace gpuaas::sim
