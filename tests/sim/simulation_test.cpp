// Whole runs with known answers: gpuaasd's real decision code and the real plugins, in virtual
// time (no sleeps), on small scenarios whose outcome can be worked out by hand.
#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "gpuaas/sim/replay.hpp"
#include "gpuaas/sim/report.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::sim {
namespace {

using testing::options_for;
using testing::run;
using testing::scenario_of;

using nlohmann::json;

// Staggering by deadline, the smallest case: 4 GPUs, four 2-GPU jobs of 1 h due at 2h30m (room
// for two start-up delays of ~2 min): two run now, two after them, every deadline met, no node
// bought.
const char* kStagger = R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: stagger}
spec:
  duration: 4h
  nodePools:
    - {name: a100, flavor: a100, gpusPerNode: 4, nodes: 1, minNodes: 1, maxNodes: 4,
       provisioningTime: 10m, pricePerNodeHour: 16}
  workloads:
    - {name: train, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 2,
       duration: 1h, deadline: 2h30m, count: 4}
)";

TEST(SimulationTest, StaggeringMeetsEveryDeadlineWithoutBuyingNodes) {
  const Scenario s = scenario_of(kStagger);
  const RunResult r = run(s, options_for(Baseline::kGpuaas));
  EXPECT_EQ(r.workloads, 4);
  EXPECT_EQ(r.outcomes, 4);
  EXPECT_EQ(r.deadlines, 4);
  EXPECT_EQ(r.deadline_misses, 0);
  EXPECT_EQ(r.max_nodes, 1);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.never_started, 0);
  // Two started at once; the other two waited for them (1 h plus a start-up delay).
  ASSERT_EQ(r.queue_wait.samples.size(), 4u);
  EXPECT_LT(r.queue_wait.percentile(50), 200.0);
  EXPECT_GT(r.queue_wait.percentile(100), 3600.0);
  EXPECT_LT(r.queue_wait.percentile(100), 3600.0 + 600.0);
  // Cost: one node for 4 h at 16 an hour, per outcome a quarter of it.
  EXPECT_NEAR(r.cost, 64.0, 1e-6);
  ASSERT_TRUE(r.cost_per_outcome().has_value());
  EXPECT_NEAR(*r.cost_per_outcome(), 16.0, 1e-6);
  EXPECT_EQ(r.cold_starts, 0);  // nothing scales to zero before idle reclaim
  EXPECT_DOUBLE_EQ(r.idle_reserved_gpu_seconds, 0.0);
  // 8 GPU-hours of work on 16 GPU-hours of capacity, plus the start-up delays.
  EXPECT_NEAR(r.busy_gpu_seconds, 8 * 3600.0, 1.0);
  EXPECT_GT(r.gpu_allocation_rate(), 0.5);
  EXPECT_LT(r.gpu_allocation_rate(), 0.6);
  EXPECT_EQ(r.deadlettered, 0);
}

// kueue-like admits all four on quota (the default policy's quota counts the pool's maxNodes);
// two pods wait, and the autoscaler buys a node for them.
TEST(SimulationTest, KueueLikeScalesOutOnPendingPods) {
  const Scenario s = scenario_of(kStagger);
  const RunResult r = run(s, options_for(Baseline::kKueueLike));
  EXPECT_EQ(r.outcomes, 4);
  EXPECT_EQ(r.deadline_misses, 0);
  EXPECT_EQ(r.max_nodes, 2);
  EXPECT_GE(r.nodes_removed, 1);  // the extra node, once empty for 10 minutes
  EXPECT_GT(r.cost, 64.0);
}

// Tenant a needs 6 GPUs; its share of the 8 is 4. Alone on its quota (static-fifo) it never
// starts; borrowing b's idle quota (gpuaas, kueue-like) it is served.
const char* kBorrow = R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: borrow}
spec:
  duration: 3h
  nodePools:
    - {name: h100, flavor: h100, gpusPerNode: 8, nodes: 1}
  workloads:
    - {name: big, namespace: team-a, queue: main, kind: Job, pods: 3, gpusPerPod: 2, duration: 1h}
    - {name: small, namespace: team-b, queue: main, kind: Job, pods: 1, gpusPerPod: 1,
       submitAt: 2h, duration: 30m}
)";

TEST(SimulationTest, ATenantStarvedUnderStaticQuotasIsServedByBorrowing) {
  const Scenario s = scenario_of(kBorrow);
  const RunResult fifo = run(s, options_for(Baseline::kStaticFifo));
  EXPECT_EQ(fifo.tenants.at("team-a").outcomes, 0);
  EXPECT_EQ(fifo.tenants.at("team-a").never_started, 1);
  EXPECT_EQ(fifo.tenants.at("team-b").outcomes, 1);
  for (Baseline b : {Baseline::kGpuaas, Baseline::kKueueLike}) {
    const RunResult r = run(s, options_for(b));
    EXPECT_EQ(r.tenants.at("team-a").outcomes, 1) << name_of(b);
    EXPECT_EQ(r.tenants.at("team-b").outcomes, 1) << name_of(b);
    EXPECT_EQ(r.never_started, 0) << name_of(b);
  }
}

json without_wall_time(const RunResult& r) {
  json j = json::parse(report_json(r));
  j.erase("wall_seconds");
  return j;
}

const char* kMixed = R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: mixed}
spec:
  duration: 5h
  nodePools:
    - {name: gpu, flavor: gpu, gpusPerNode: 8, nodes: 2, maxNodes: 3, provisioningTime: 5m}
  workloads:
    - {name: train, namespace: research, queue: main, kind: PyTorchJob, pods: 2, gpusPerPod: 4,
       duration: 45m, count: 6, every: 10m}
    - {name: tune, namespace: research, queue: main, kind: RayCluster, pods: 2, gpusPerPod: 2,
       submitAt: 20m, duration: 1h, lifetime: 2h, deadline: 3h}
    - {name: chat, namespace: serving, queue: main, kind: InferenceService, pods: 1,
       gpusPerPod: 1, duration: 4h, requestRate: 2}
    - {name: nb, namespace: lab, queue: main, kind: Notebook, gpusPerPod: "0.5", duration: 30m,
       lifetime: 3h, count: 3, every: 30m}
)";

TEST(SimulationTest, SameSeedSameReport) {
  const Scenario s = scenario_of(kMixed);
  for (Baseline b : {Baseline::kGpuaas, Baseline::kKueueLike}) {
    const json a = without_wall_time(run(s, options_for(b, 7)));
    const json again = without_wall_time(run(s, options_for(b, 7)));
    EXPECT_EQ(a, again) << name_of(b);
    EXPECT_GT(a["outcomes"].get<int>(), 0) << name_of(b);
    EXPECT_GT(a["requests"]["total"].get<int>(), 0) << name_of(b);
    // Every object, tick and metric sample (dcgm, queue-proxy counters) decoded in gpuaasd.
    EXPECT_EQ(a["decisions"]["deadlettered"], 0) << name_of(b);
  }
  // Another seed draws other start-up delays.
  EXPECT_NE(without_wall_time(run(s, options_for(Baseline::kGpuaas, 7)))["queue_wait_seconds"],
            without_wall_time(run(s, options_for(Baseline::kGpuaas, 8)))["queue_wait_seconds"]);
}

TEST(SimulationTest, BadPolicyOrFlavorIsAClearError) {
  Scenario s = scenario_of(kStagger);
  s.node_pools[0].flavor = "nope";
  s.policy_files = {};
  SimOptions o = options_for(Baseline::kGpuaas);
  o.policies = {{"team.yaml",
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                 "metadata: {name: a100}\n"}};
  auto r = run_simulation(s, o);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("flavor \"nope\" is not a ResourceFlavor"), std::string::npos)
      << r.status().message();
  o.policies = {
      {"bad.yaml", "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {}\n"}};
  r = run_simulation(scenario_of(kStagger), o);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("bad.yaml:"), std::string::npos) << r.status().message();
}

TEST(SimulationTest, CopiesThatCollideWithAnotherWorkloadAreRefused) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  nodePools: [{name: p, flavor: p, nodes: 1}]
  workloads:
    - {name: job, namespace: a, queue: q, kind: Job, duration: 1h, count: 2}
    - {name: job-1, namespace: a, queue: q, kind: Job, duration: 1h}
)");
  auto r = run_simulation(s, options_for(Baseline::kGpuaas));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("workload a/job-1 (a copy of job-1) has the name of another"),
            std::string::npos)
      << r.status().message();
}

// The same decisions through a real nats-server as through the in-process bus.
class SimulationOverNatsTest : public gpuaas::testing::NatsServerTest {};

TEST_F(SimulationOverNatsTest, SameFiguresAsInProcess) {
  const Scenario s = scenario_of(kStagger);
  SimOptions o = options_for(Baseline::kGpuaas);
  const RunResult local = run(s, o);
  o.server = url();
  const RunResult remote = run(s, o);
  EXPECT_EQ(remote.outcomes, local.outcomes);
  EXPECT_EQ(remote.deadline_misses, local.deadline_misses);
  EXPECT_EQ(remote.queue_wait.samples, local.queue_wait.samples);
  EXPECT_EQ(remote.events, local.events);
}

}  // namespace
}  // namespace gpuaas::sim

namespace gpuaas::sim {
namespace {

// Trace replays are scenarios: the Alibaba pods become one-pod Jobs on the trace's nodes, the
// Azure requests drive InferenceServices.
TEST(ReplayTest, AlibabaTraceBecomesAScenario) {
  const std::string dir = std::string(GPUAAS_SHARED_DIR) + "/traces/";
  auto s =
      alibaba_scenario(dir + "openb_pod_list_default.csv", dir + "openb_node_list_gpu_node.csv", 0);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->workloads.size(), 8152u);
  int64_t nodes = 0, gpus = 0;
  for (const auto& p : s->node_pools) {
    nodes += p.nodes;
    gpus += int64_t{p.nodes} * p.gpus_per_node;
  }
  EXPECT_EQ(nodes, 1213);
  EXPECT_EQ(gpus, 6212);
  std::set<std::string> tenants;
  for (const auto& w : s->workloads) tenants.insert(w.namespace_);
  EXPECT_EQ(tenants,
            (std::set<std::string>{"best-effort", "burstable", "guaranteed", "latency-sensitive"}));
  auto bad = alibaba_scenario(dir + "missing.csv", dir + "openb_node_list_gpu_node.csv", 0);
  EXPECT_FALSE(bad.is_ok());
}

TEST(ReplayTest, AzureTraceDrivesInferenceServices) {
  const std::string file =
      std::string(GPUAAS_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  auto s = azure_llm_scenario(file, 4, 0.25);  // the first quarter hour
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_EQ(s->workloads.size(), 4u);
  std::size_t arrivals = 0;
  for (const auto& w : s->workloads) arrivals += w.arrivals_ms->size();
  const RunResult r = run(*s, options_for(Baseline::kGpuaas));
  EXPECT_EQ(r.requests, static_cast<int64_t>(arrivals));
  // Requests before the services ran (their start-up) wait longer than the objective.
  EXPECT_LT(r.requests_within_objective, r.requests);
  EXPECT_GT(r.requests_within_objective, r.requests * 8 / 10);
  // The latency model measured each one: its time to first token from its tokens and its wait.
  EXPECT_EQ(r.ttft.samples.size(), static_cast<std::size_t>(r.requests));
  EXPECT_EQ(r.outcomes, 4);  // each served until the end
}

}  // namespace
}  // namespace gpuaas::sim

namespace gpuaas::sim {
namespace {

// One service: a request a second for the first minute, nothing for half an hour, then a request
// a second for a minute. Knative's defaults take it to zero 90 s after the first burst and wake
// it on the second; always-on keeps it up.
Scenario two_bursts() {
  Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 1h
  nodePools: [{name: gpu, flavor: gpu, gpusPerNode: 4, nodes: 1}]
  workloads:
    - {name: chat, namespace: serving, queue: main, kind: InferenceService, duration: 1h}
)");
  auto arrivals = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 5'000; t < 65'000; t += 1000) arrivals->push_back(t);
  for (int64_t t = 1'800'000; t < 1'860'000; t += 1000) arrivals->push_back(t);
  s.workloads[0].arrivals_ms = arrivals;
  return s;
}

TEST(ServingBaselineTest, KnativeScalesToZeroAndWakesOnARequest) {
  const Scenario s = two_bursts();
  const RunResult on = run(s, options_for(Baseline::kAlwaysOn));
  EXPECT_EQ(on.requests, 120);
  EXPECT_EQ(on.wakes, 0);
  EXPECT_EQ(on.cold_starts, 0);
  EXPECT_DOUBLE_EQ(on.gpu_seconds_at_zero, 0.0);

  const RunResult kn = run(s, options_for(Baseline::kKnative));
  EXPECT_EQ(kn.requests, 120);
  EXPECT_EQ(kn.wakes, 1);
  ASSERT_EQ(kn.wake_latency.samples.size(), 1u);
  ASSERT_EQ(kn.queue_wait.samples.size(), 1u);
  // The first burst is over before the service first runs (its start-up): it goes to zero 90 s
  // after it started (the waiting requests answered then), wakes at 1,800 s, and goes to zero
  // again 90 s after it runs again. Knative decides on its 2 s ticks: each zero up to a tick late.
  const double first_start = kn.queue_wait.samples[0];
  const double woke = 1800.0 + kn.wake_latency.samples[0];
  EXPECT_NEAR(kn.gpu_seconds_at_zero, (1800.0 - (first_start + 90)) + (3600.0 - (woke + 90)), 4.0);
  EXPECT_DOUBLE_EQ(kn.idle_reserved_gpu_seconds, kn.gpu_seconds_at_zero);  // quota kept
  // The wake takes a start-up delay (2 min ± 20%); the second burst's requests meanwhile are cold.
  EXPECT_GE(kn.wake_latency.samples[0], 96.0);
  EXPECT_LE(kn.wake_latency.samples[0], 144.0);
  EXPECT_EQ(kn.cold_starts, 60);
  EXPECT_LT(kn.requests_within_objective, on.requests_within_objective);
  EXPECT_LT(kn.allocated_gpu_seconds, on.allocated_gpu_seconds);
}

// A request is an outcome when it met its latency objective and its answer passed the quality
// signal: the service's outcomes are its requests within objective times its quality share, and
// its cost per outcome is its share of the run's cost over them.
TEST(ServingBaselineTest, ServiceOutcomesCountQuality) {
  Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 1h
  nodePools: [{name: gpu, flavor: gpu, gpusPerNode: 4, nodes: 1, pricePerNodeHour: 8}]
  workloads:
    - {name: chat, namespace: serving, queue: main, kind: InferenceService, duration: 1h,
       quality: 0.9}
)");
  s.workloads[0].arrivals_ms = two_bursts().workloads[0].arrivals_ms;
  const RunResult on = run(s, options_for(Baseline::kAlwaysOn));
  ASSERT_EQ(on.services.size(), 1u);
  const auto& [key, svc] = *on.services.begin();
  EXPECT_EQ(svc.tenant, "serving");
  EXPECT_EQ(svc.requests, 120);
  EXPECT_GT(svc.within_objective, 0);
  EXPECT_LE(svc.within_objective, 120);
  EXPECT_DOUBLE_EQ(svc.outcomes(), 0.9 * static_cast<double>(svc.within_objective));
  EXPECT_GT(svc.cost, 0);
  const auto report = nlohmann::json::parse(report_json(on));
  const auto& x = report["services"][key];
  EXPECT_NEAR(x["outcomes"].get<double>(), svc.outcomes(), 0.01);
  EXPECT_NEAR(x["cost_per_outcome"].get<double>(), svc.cost / svc.outcomes(), 1e-9);
}

TEST(ServingBaselineTest, AzureRequestsGoByPopularity) {
  const std::string file =
      std::string(GPUAAS_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  auto s = azure_llm_scenario(file, 8, 0, 42);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  std::vector<std::size_t> n;
  for (const auto& w : s->workloads) n.push_back(w.arrivals_ms->size());
  // Weights 1/(i+1): service 0 takes about twice service 1's and eight times service 7's.
  EXPECT_NEAR(static_cast<double>(n[0]) / static_cast<double>(n[1]), 2.0, 0.15);
  EXPECT_NEAR(static_cast<double>(n[0]) / static_cast<double>(n[7]), 8.0, 0.8);
  auto again = azure_llm_scenario(file, 8, 0, 42);
  EXPECT_EQ(*again->workloads[3].arrivals_ms, *s->workloads[3].arrivals_ms);
  auto other = azure_llm_scenario(file, 8, 0, 43);
  EXPECT_NE(*other->workloads[3].arrivals_ms, *s->workloads[3].arrivals_ms);
}

}  // namespace
}  // namespace gpuaas::sim
