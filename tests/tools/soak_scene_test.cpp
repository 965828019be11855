// The soak's queues scene is what `gpuaas-bench soak --scene large` and `gpuaas-bench end-to-end`
// measure against: its policy loads, its ClusterQueues split evenly among the cohorts, its
// preloaded Jobs never fit their cohort (so they stay pending), and with a scrape interval every
// node is scraped once per interval. Asserts what is generated, never how fast.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "gpuaas/policy/policy_loader.hpp"
#include "soak_scene.hpp"
#include "soak_traffic.hpp"

namespace gpuaas::testing {
namespace {

bench::SoakMix small_scene() {
  bench::SoakMix m;
  m.nodes = 100;
  m.cluster_queues = 10;
  m.cohorts = 3;
  m.pending = 7;
  m.scrape_seconds = 30;
  m.job_rate = 5;
  return m;
}

int64_t gpu_quota(const policy::ClusterQueue& cq, const std::string& flavor) {
  for (const auto& g : cq.resource_groups)
    for (const auto& f : g.flavors)
      for (const auto& r : f.resources)
        if (f.flavor == flavor && r.name == "nvidia.com/gpu") return r.nominal_milli / 1000;
  return 0;
}

TEST(SoakScene, LargeSetsItsSizesUnlessAFlagWasGiven) {
  bench::SoakMix m;
  ASSERT_TRUE(bench::apply_soak_scene(
      "large", m, [](const char* f) { return std::string(f) == "--job-rate"; }));
  EXPECT_EQ(m.nodes, 10000);
  EXPECT_EQ(m.cluster_queues, 1000);
  EXPECT_EQ(m.cohorts, 100);
  EXPECT_EQ(m.pending, 50000);
  EXPECT_EQ(m.scrape_seconds, 30);
  EXPECT_EQ(m.job_rate, bench::SoakMix{}.job_rate);  // given: kept
  EXPECT_FALSE(bench::apply_soak_scene("tiny", m, [](const char*) { return false; }));
  // Ticks, nine events per Job and a scrape per node every 30 s.
  m.job_rate = 50;
  EXPECT_NEAR(bench::soak_mix_rate(m), 1 + 9 * 50 + 10000.0 / 30, 1e-9);
}

TEST(SoakScene, PolicyLoadsAndPendingJobsExceedTheirCohort) {
  const bench::SoakMix m = small_scene();
  auto loaded = policy::parse_policy_texts({{"scene.yaml", bench::soak_policy_yaml(m)}});
  ASSERT_TRUE(loaded.ok()) << loaded.errors.front().str();
  ASSERT_EQ(loaded.set.cluster_queues.size(), 10u);
  ASSERT_EQ(loaded.set.local_queues.size(), 10u);
  std::map<std::string, int64_t> cohort_gpus[2];
  for (const auto& cq : loaded.set.cluster_queues) {
    cohort_gpus[0][cq.cohort] += gpu_quota(cq, "h100");
    cohort_gpus[1][cq.cohort] += gpu_quota(cq, "a100");
  }
  EXPECT_EQ(cohort_gpus[0].size(), 3u);
  for (const auto& flavor : cohort_gpus)
    for (const auto& [cohort, gpus] : flavor)
      EXPECT_GT(bench::soak_pending_pods(m) * 8, gpus) << cohort << " could admit a pending Job";
}

TEST(SoakScene, SetupHoldsThePendingJobsAndScrapesComeAsDue) {
  const bench::SoakMix m = small_scene();
  bench::SoakTraffic traffic(m, "gpuaas-test", nlohmann::json{{"metadata", {{"labels", {}}}}},
                             wire::EventTime(std::chrono::seconds(1'800'000'000)));
  const auto scene = traffic.setup("{}");
  EXPECT_EQ(scene.size(), 1u + 100u + 7u);  // the PolicySet, the Nodes, the pending Jobs
  const auto t0 = bench::SoakTraffic::Clock::now();
  uint64_t events = 0;
  for (int ms = 0; ms <= 30000; ms += 10) {
    const auto at = std::chrono::milliseconds(ms);
    while (traffic.next_due(at, t0 + at)) ++events;
  }
  const bench::SoakCounts& c = traffic.counts();
  EXPECT_EQ(c.samples, 101u);  // each node once in 30 s, and the first node again at 30 s
  EXPECT_EQ(c.ticks, 31u);
  EXPECT_EQ(c.jobs_submitted, 151u);                          // 5 a second, the first at 0
  EXPECT_EQ(events, c.samples + c.ticks + c.jobs_submitted);  // no admission: no Job steps
}

}  // namespace
}  // namespace gpuaas::testing
