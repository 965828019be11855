// Deadlines (WorkloadInfo.deadline and expected_duration, read from annotations by the daemon):
// estimated starts, earliest deadline first, holding work that would make an earlier deadline
// miss, and the list of deadlines at risk.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using namespace std::chrono_literals;
using test::gpus;
using test::Job;
using test::job_key;
using test::keys_of;
using test::t0;

std::string four_gpus() {
  return test::flavor_yaml("gpu") + test::cluster_queue_yaml("cq", "", {{"gpu", 4}}) +
         test::local_queue_yaml("team-a", "main", "cq");
}

Job job(const std::string& name, int64_t gpu, Seconds duration, std::optional<Time> deadline,
        Time created = t0) {
  return {.name = name, .gpu = gpu, .created = created, .deadline = deadline, .duration = duration};
}

// The case: 4 GPUs (one node of 4, or two of 2), four 2-GPU jobs of 1 h due in 2 h.
class DeadlineMustWorkTest : public ::testing::TestWithParam<int> {};

TEST_P(DeadlineMustWorkTest, FourJobsOfTwoGpusMeetTheirDeadlines) {
  Scheduler s(test::load_policy(four_gpus()));
  const int nodes = GetParam();
  test::add_nodes(s, "gpu", nodes, 4 / nodes);
  std::vector<Job> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(job("j" + std::to_string(i), gpus(2), 1h, t0 + 2h));
    test::submit(s, jobs.back(), t0);
  }
  const auto first = s.schedule(t0);
  EXPECT_EQ(test::admitted(first), keys_of({"j0", "j1"}));
  for (const char* name : {"j2", "j3"}) {
    const auto x = s.explain(job_key("team-a", name), t0);
    EXPECT_EQ(x.reason, reason::kWaitingForQuota) << name;
    ASSERT_TRUE(x.estimated_start.has_value()) << name;
    EXPECT_EQ(*x.estimated_start, t0 + 1h) << name;
    EXPECT_FALSE(x.deadline_at_risk) << name;
    EXPECT_EQ(x.deadline, t0 + 2h);
  }
  EXPECT_TRUE(s.deadlines_at_risk(t0).empty());

  test::finish(s, jobs[0], t0 + 1h);
  test::finish(s, jobs[1], t0 + 1h);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1h)), keys_of({"j2", "j3"}));
  for (const char* name : {"j2", "j3"}) {
    const auto x = s.explain(job_key("team-a", name), t0 + 1h);
    EXPECT_EQ(x.state, "Admitted");
    ASSERT_TRUE(x.estimated_start.has_value());
    EXPECT_LE(*x.estimated_start + 1h, t0 + 2h) << name << " misses its deadline";
  }
  EXPECT_TRUE(s.deadlines_at_risk(t0 + 1h).empty());
}

INSTANTIATE_TEST_SUITE_P(NodeLayouts, DeadlineMustWorkTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param == 1 ? std::string("OneNodeOfFour")
                                               : std::string("TwoNodesOfTwo");
                         });

TEST(DeadlineTest, EarliestDeadlineFirstWithinAPriority) {
  Scheduler s(test::load_policy(four_gpus()));
  test::add_nodes(s, "gpu", 1, 4);
  test::submit(s, job("none", gpus(4), 1h, std::nullopt, t0 - 1h), t0 + 1s);
  test::submit(s, job("late", gpus(4), 1h, t0 + 10h, t0), t0 + 1s);
  test::submit(s, job("early", gpus(4), 1h, t0 + 3h, t0 + 1s), t0 + 1s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"early"}));
  EXPECT_EQ(s.explain(job_key("team-a", "late"), t0 + 1s).position_in_cluster_queue, 0);
  EXPECT_EQ(s.explain(job_key("team-a", "none"), t0 + 1s).position_in_cluster_queue, 1);
}

// deadlines.enable: false is Kueue's order: FIFO within a priority, no holds.
TEST(DeadlineTest, DisabledDeadlinesAreIgnored) {
  Scheduler s(test::load_policy(four_gpus() +
                                "---\napiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\n"
                                "metadata: {name: fifo}\nspec: {deadlines: {enable: false}}\n"));
  test::add_nodes(s, "gpu", 1, 4);
  test::submit(s, job("none", gpus(4), 1h, std::nullopt, t0 - 1h), t0 + 1s);
  test::submit(s, job("early", gpus(4), 1h, t0 + 3h, t0 + 1s), t0 + 1s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"none"}));
  EXPECT_FALSE(s.explain(job_key("team-a", "early"), t0 + 1s).deadline.has_value());
}

// r runs until t0+1h on 2 of 4 GPUs; A needs all 4 by t0+1h30m. B (3 h) would push A past its
// deadline and is held; C (30 min) ends before r does and is admitted.
TEST(DeadlineTest, HoldsWhatWouldMakeAnEarlierDeadlineMiss) {
  Scheduler s(test::load_policy(four_gpus()));
  test::add_nodes(s, "gpu", 1, 4);
  const Job r = job("r", gpus(2), 1h, std::nullopt);
  test::submit(s, r, t0);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"r"}));

  const Job a = job("a", gpus(4), 1h, t0 + 2h + 30min, t0 + 1s);
  const Job b = job("b", gpus(2), 3h, std::nullopt, t0 + 2s);
  const Job c = job("c", gpus(2), 30min, std::nullopt, t0 + 3s);
  for (const auto& j : {a, b, c}) test::submit(s, j, t0 + 10s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 10s)), keys_of({"c"}));
  auto xb = s.explain(job_key("team-a", "b"), t0 + 10s);
  EXPECT_EQ(xb.reason, reason::kHeldForDeadline);
  EXPECT_EQ(xb.holder, "deadline");
  EXPECT_NE(xb.message.find("team-a/a"), std::string::npos) << xb.message;
  auto xa = s.explain(job_key("team-a", "a"), t0 + 10s);
  EXPECT_EQ(xa.reason, reason::kWaitingForQuota);
  ASSERT_TRUE(xa.estimated_start.has_value());
  EXPECT_EQ(*xa.estimated_start, t0 + 1h);
  EXPECT_FALSE(xa.deadline_at_risk);
  EXPECT_TRUE(s.deadlines_at_risk(t0 + 10s).empty());
  EXPECT_GE(s.stats().held_for_deadline, 1u);

  // C ends early: B is still held, since A could not start until B ended.
  test::finish(s, c, t0 + 40min);
  EXPECT_TRUE(s.schedule(t0 + 40min).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "b"), t0 + 40min).reason, reason::kHeldForDeadline);
  // r ends: A starts in time; B waits for quota now.
  test::finish(s, r, t0 + 1h);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1h)), keys_of({"a"}));
  EXPECT_EQ(s.explain(job_key("team-a", "b"), t0 + 1h).reason, reason::kWaitingForQuota);
  test::finish(s, a, t0 + 2h);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2h)), keys_of({"b"}));
}

TEST(DeadlineTest, ADeadlineThatCannotBeMetIsAtRisk) {
  Scheduler s(test::load_policy(four_gpus()));
  test::add_nodes(s, "gpu", 1, 4);
  test::submit(s, job("r", gpus(4), 3h, std::nullopt), t0);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"r"}));
  test::submit(s, job("a", gpus(4), 1h, t0 + 2h, t0 + 1s), t0 + 1s);
  test::submit(s, job("b", gpus(4), 1h, t0 + 10h, t0 + 2s), t0 + 2s);
  EXPECT_TRUE(s.schedule(t0 + 2s).empty());
  EXPECT_EQ(s.deadlines_at_risk(t0 + 2s), keys_of({"a"}));
  const auto xa = s.explain(job_key("team-a", "a"), t0 + 2s);
  EXPECT_TRUE(xa.deadline_at_risk);
  ASSERT_TRUE(xa.estimated_start.has_value());
  EXPECT_EQ(*xa.estimated_start, t0 + 3h);
  const auto xb = s.explain(job_key("team-a", "b"), t0 + 2s);
  EXPECT_FALSE(xb.deadline_at_risk);
  ASSERT_TRUE(xb.estimated_start.has_value());
  EXPECT_EQ(*xb.estimated_start, t0 + 4h);
}

}  // namespace
}  // namespace gpuaas::core::admission
