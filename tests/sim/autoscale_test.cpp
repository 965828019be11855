// KServe's autoscaler in Knative mode as the simulator plays it (sim/src/kpa.hpp,
// simulation_autoscale.cpp): replicas follow the request rate between minReplicas and
// maxReplicas, each ready replica adds its slots to the latency model, and each serving replica
// publishes vLLM's series, which gpuaasd reads. Runs are always-on: no gpuaasd reclaim, Knative's
// autoscaler alone.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpuaas/sim/default_policy.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

namespace gpuaas::sim {
namespace {

using testing::options_for;
using testing::run;
using testing::scenario_of;

// Knative applies its target utilisation (70%) to an rps target as well.
constexpr double kTargetUtilization = 0.7;

// One service "chat" on an 8-GPU node; `fields` are its own. A replica has 8 slots, each request
// 100 ms of prefill and 1 s of answer: 7.3 requests a second per replica at most.
Scenario chat(const std::string& duration, const std::string& fields) {
  return scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: )" + duration +
                     R"(
  nodePools: [{name: gpu, flavor: gpu, gpusPerNode: 8, nodes: 1}]
  workloads:
    - {name: chat, namespace: serving, queue: main, kind: InferenceService, duration: )" +
                     duration + R"(,
       startupDelay: 10s, latencyObjective: 500ms,
       serving: {slots: 8, prefillTokensPerSecond: 1000, outputTokensPerSecond: 50,
                 contextTokens: 100, generatedTokens: 50},
       )" + fields + "}\n");
}

// The replicas Knative asked for at `t` seconds (0 before the first).
int32_t replicas_at(const ServiceFigures& svc, double t) {
  int32_t n = 0;
  for (const auto& [at, replicas] : svc.replicas)
    if (at <= t) n = replicas;
  return n;
}

// Poisson arrivals whose rate follows `rate(t seconds)`, over [0, end) seconds, drawn by hand from
// 53 bits so that every standard library draws the same.
std::shared_ptr<std::vector<int64_t>> arrivals(double end, double (*rate)(double)) {
  auto out = std::make_shared<std::vector<int64_t>>();
  std::mt19937_64 rng(7);
  for (double t = 0;;) {
    t += -std::log1p(-static_cast<double>(rng() >> 11) * 0x1.0p-53) / rate(t);
    if (t >= end) return out;
    out->push_back(static_cast<int64_t>(t * 1000));
  }
}

TEST(AutoscaleTest, ASteadyRateSettlesAtRateOverTargetAndMeetsTheObjective) {
  const Scenario s =
      chat("30m", "requestRate: 9, maxReplicas: 0, scaleMetric: rps, scaleTarget: 5");
  const RunResult r = run(s, options_for(Baseline::kAlwaysOn));
  ASSERT_EQ(r.services.size(), 1u);
  const ServiceFigures& svc = r.services.begin()->second;
  const auto want = static_cast<int32_t>(std::ceil(9.0 / (5 * kTargetUtilization)));
  ASSERT_EQ(want, 3);
  // Settled within the first minutes (one replica first, then the panic window's want, which a
  // noisy 6 s may put one higher): from there on, nothing changes.
  for (double t = 300; t <= 1800; t += 2)
    ASSERT_EQ(replicas_at(svc, t), want) << "at " << t << " s";
  EXPECT_GE(svc.max_replicas, want);
  EXPECT_LE(svc.max_replicas, want + 1);
  // Three replicas of 8 slots at 9 requests a second: nobody waits for a slot, so the time to
  // first token is the prefill. Only the first seconds miss: requests wait for the start, then
  // one replica is short of slots until the others run.
  EXPECT_NEAR(r.ttft.percentile(50), 0.1, 1e-6);
  ASSERT_GT(r.ttft.samples.size(), 2000u);
  for (std::size_t k = 2000; k < r.ttft.samples.size(); ++k)  // in start order, from about 4 min
    ASSERT_LE(r.ttft.samples[k], 0.5) << "request " << k;
  EXPECT_GE(static_cast<double>(r.requests_within_objective),
            0.97 * static_cast<double>(r.requests));
}

// 2 requests a second for 5 minutes, a ramp to 30 over 10 minutes, 30 for 5 minutes, then one
// request every 5 s for 20 minutes; minReplicas 2 and maxReplicas 6, 3.5 requests a second per
// replica: the ramp wants 9 and gets 6, the quiet spell wants 1 and keeps 2.
double ramp(double t) {
  if (t < 300) return 2;
  if (t < 900) return 2 + 28 * (t - 300) / 600;
  if (t < 1200) return 30;
  return 0.2;
}

TEST(AutoscaleTest, ARampRaisesReplicasAndAQuietSpellLowersThemWithinTheBounds) {
  Scenario s = chat("40m", "pods: 2, maxReplicas: 6, scaleMetric: rps, scaleTarget: 5");
  s.workloads[0].arrivals_ms = arrivals(2400, ramp);
  const RunResult r = run(s, options_for(Baseline::kAlwaysOn));
  const ServiceFigures& svc = r.services.begin()->second;
  ASSERT_FALSE(svc.replicas.empty());
  EXPECT_EQ(svc.replicas.front().second, 2);  // minReplicas to start
  for (const auto& [t, n] : svc.replicas) {
    EXPECT_GE(n, 2) << "at " << t << " s";
    EXPECT_LE(n, 6) << "at " << t << " s";
  }
  EXPECT_EQ(replicas_at(svc, 240), 2);  // 2 a second: one replica would do, minReplicas is 2
  const int32_t mid_ramp = replicas_at(svc, 600);  // about 16 a second: 5 wanted
  EXPECT_GE(mid_ramp, 3);
  EXPECT_LE(mid_ramp, 6);
  EXPECT_EQ(replicas_at(svc, 1190), 6);  // 30 a second wants 9: maxReplicas
  EXPECT_EQ(svc.max_replicas, 6);
  // The quiet spell: down once the stable window has forgotten the load, to minReplicas.
  EXPECT_EQ(replicas_at(svc, 1500), 2);
  EXPECT_EQ(replicas_at(svc, 2399), 2);
  EXPECT_LE(r.ttft.percentile(95), 0.5);
}

// Knative's defaults (concurrency, 70 in flight per pod) and minReplicas 0: a quiet service goes
// to zero after the stable window and the grace period, and a request brings it back.
TEST(AutoscaleTest, MinReplicasZeroGoesToZeroOnKnativesDefaults) {
  Scenario s = chat("20m", "pods: 1, maxReplicas: 0");
  auto a = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 30'000; t < 90'000; t += 500) a->push_back(t);  // 2 a second for a minute
  a->push_back(900'000);                                           // one more at 15 min
  s.workloads[0].arrivals_ms = a;
  const RunResult kn = run(s, options_for(Baseline::kKnative));  // written with minReplicas 0
  const ServiceFigures& svc = kn.services.begin()->second;
  // The last answer at about 91 s; no traffic for 60 s and 30 s of grace: zero at about 181 s.
  EXPECT_EQ(replicas_at(svc, 170), 1);
  EXPECT_EQ(replicas_at(svc, 190), 0);
  EXPECT_EQ(kn.wakes, 1);
  EXPECT_EQ(kn.cold_starts, 1);
  EXPECT_EQ(replicas_at(svc, 905), 1);
  // Concurrency about 2 in flight against 70: one replica throughout.
  EXPECT_EQ(svc.max_replicas, 1);
  const RunResult on = run(s, options_for(Baseline::kAlwaysOn));  // minReplicas 1: never zero
  EXPECT_EQ(on.wakes, 0);
  EXPECT_DOUBLE_EQ(on.gpu_seconds_at_zero, 0.0);
}

// The object's bounds are read at every tick (so a patch of them, gpuaasd's SET_SCALE, counts
// from the next): minReplicas 3 runs 3 replicas with next to no traffic.
TEST(AutoscaleTest, TheObjectsMinReplicasHoldWithoutTraffic) {
  Scenario s = chat("10m", "pods: 3, maxReplicas: 3");
  s.workloads[0].arrivals_ms = std::make_shared<std::vector<int64_t>>(std::vector<int64_t>{1000});
  const RunResult r = run(s, options_for(Baseline::kAlwaysOn));
  const ServiceFigures& svc = r.services.begin()->second;
  EXPECT_EQ(replicas_at(svc, 599), 3);
  EXPECT_EQ(svc.max_replicas, 3);
  EXPECT_NEAR(r.allocated_gpu_seconds, 3 * 600.0, 1.0);  // three GPUs from their binding
}

// gpuaasd reads each replica's vLLM series through a ServiceObjective: the requests its replicas
// finished add up to the simulator's, less those still in flight or after its last scrape.
TEST(AutoscaleTest, GpuaasdReadsTheReplicasVllmSeries) {
  Scenario s = chat("20m", "pods: 2, maxReplicas: 2, requestRate: 4");
  s.metrics_interval = std::chrono::seconds(10);
  SimOptions o = options_for(Baseline::kAlwaysOn);
  o.policies = default_policy(s);
  o.policies.push_back({"objective.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: chat}
spec:
  selector: {kinds: [InferenceService]}
  latency: {ttftP95: 500ms}
)"});
  const RunResult r = run(s, o);
  const auto report = nlohmann::json::parse(r.daemon_report, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.daemon_report;
  ASSERT_TRUE(report.contains("services")) << r.daemon_report;
  ASSERT_EQ(report["services"].size(), 1u) << r.daemon_report;
  const auto& seen = report["services"][0];
  const double requests = seen.value("requests_all_time", 0.0);
  // gpuaasd counts a replica's rise from its first scrape to its last: what finished before the
  // first (its first 10 s or so) and after the last (10 s before the end) it does not see.
  EXPECT_LE(requests, static_cast<double>(r.requests));
  EXPECT_GE(requests, static_cast<double>(r.requests) - 4 * 40);
  // Their first tokens come after 100 ms of prefill, within the 0.5 s bucket. gpuaasd takes the
  // fewer of a scrape's first tokens and finished requests, and the two run a second apart, so
  // some scrapes count a few less.
  EXPECT_LE(seen.value("outcomes", 0.0), requests);
  EXPECT_GE(seen.value("outcomes", 0.0), 0.9 * requests);
}

TEST(AutoscaleTest, TheAutoscalersFieldsAreAnInferenceServicesAndChecked) {
  auto s = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  workloads:
    - {name: t, namespace: a, queue: q, kind: PyTorchJob, duration: 1h, maxReplicas: 2}
    - {name: c, namespace: a, queue: q, kind: InferenceService, duration: 1h, pods: 3,
       maxReplicas: 2, scaleMetric: cpu, scaleTarget: 0}
)",
                          "bad.yaml", "");
  ASSERT_FALSE(s.is_ok());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("spec.workloads[0].maxReplicas: only an InferenceService"), std::string::npos)
      << m;
  EXPECT_NE(m.find("spec.workloads[1].maxReplicas: below pods"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.workloads[1].scaleMetric: concurrency or rps"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.workloads[1].scaleTarget"), std::string::npos) << m;
}

}  // namespace
}  // namespace gpuaas::sim
