// Policy reload (set_policy): what runs keeps running and keeps its reservation, even above a
// smaller quota or without its queue; what waits queues again under the new queues.
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

std::string queue(const std::string& cq, int64_t nominal) {
  return test::flavor_yaml("gpu") + test::cluster_queue_yaml(cq, "", {{"gpu", nominal}}) +
         test::local_queue_yaml("team-a", "main", cq);
}

class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::add_nodes(s, "gpu", 2, 8);
    test::submit(s, running);
    test::submit(s, waiting, t0 + 1s);
    ASSERT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"running"}));
  }
  Scheduler s{test::load_policy(queue("cq", 8))};
  const Job running{.name = "running", .gpu = gpus(6)};
  const Job waiting{.name = "waiting", .gpu = gpus(4), .created = t0 + 1s};
};

TEST_F(ReloadTest, ASmallerQuotaEvictsNothing) {
  s.set_policy(test::load_policy(queue("cq", 4)), t0 + 1min);
  EXPECT_TRUE(s.schedule(t0 + 1min).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "running"), t0 + 1min).state, "Admitted");
  EXPECT_EQ(s.stats().admitted, 1);
  const auto x = s.explain(job_key("team-a", "waiting"), t0 + 1min);
  EXPECT_EQ(x.reason, reason::kWaitingForQuota) << x.message;
  EXPECT_EQ(x.cluster_queue, "cq");
  // 6 of 4 in use: nothing new fits until the running one ends.
  EXPECT_TRUE(s.schedule(t0 + 2min).empty());
  test::finish(s, running, t0 + 3min);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3min)), keys_of({"waiting"}));
}

TEST_F(ReloadTest, PendingWorkloadsQueueAgainUnderTheNewQueues) {
  // team-a/main now feeds cq2 (12 GPUs); cq is gone. What runs is counted where its LocalQueue
  // now leads, so 6 of cq2's 12 are taken.
  s.set_policy(test::load_policy(queue("cq2", 12)), t0 + 1min);
  const auto ds = s.schedule(t0 + 1min);
  EXPECT_EQ(test::admitted(ds), keys_of({"waiting"}));
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].cluster_queue, "cq2");
  const auto x = s.explain(job_key("team-a", "running"), t0 + 1min);
  EXPECT_EQ(x.state, "Admitted");
  EXPECT_EQ(x.cluster_queue, "cq2");
  test::submit(s, {.name = "third", .gpu = gpus(4), .created = t0 + 2min}, t0 + 2min);
  EXPECT_TRUE(s.schedule(t0 + 2min).empty()) << "6 + 4 of 12 are taken";
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

TEST_F(ReloadTest, LocalQueueRemovedAndRestoredKeepsTheRunningWorkload) {
  // The LocalQueue team-a/main disappears: the running workload is not dropped; the waiting one
  // cannot queue anywhere.
  const std::string without_main = test::flavor_yaml("gpu") +
                                   test::cluster_queue_yaml("cq", "", {{"gpu", 8}}) +
                                   test::local_queue_yaml("team-a", "other", "cq");
  s.set_policy(test::load_policy(without_main), t0 + 1min);
  EXPECT_TRUE(s.schedule(t0 + 1min).empty());
  auto x = s.explain(job_key("team-a", "running"), t0 + 1min);
  EXPECT_EQ(x.state, "Admitted");
  EXPECT_EQ(x.reason, reason::kAdmitted);
  EXPECT_EQ(s.explain(job_key("team-a", "waiting"), t0 + 1min).reason, reason::kInadmissible);

  // It comes back: what runs is counted again, not admitted a second time.
  s.set_policy(test::load_policy(queue("cq", 8)), t0 + 2min);
  EXPECT_TRUE(s.schedule(t0 + 2min).empty());
  x = s.explain(job_key("team-a", "running"), t0 + 2min);
  EXPECT_EQ(x.state, "Admitted");
  EXPECT_EQ(x.cluster_queue, "cq");
  EXPECT_EQ(s.explain(job_key("team-a", "waiting"), t0 + 2min).reason, reason::kWaitingForQuota);
  EXPECT_EQ(s.stats().admitted, 1);
  test::finish(s, running, t0 + 3min);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3min)), keys_of({"waiting"}));
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

TEST_F(ReloadTest, ReloadingTheSamePolicyChangesNothing) {
  s.set_policy(test::load_policy(queue("cq", 8)), t0 + 1min);
  EXPECT_TRUE(s.schedule(t0 + 1min).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "running"), t0 + 1min).state, "Admitted");
  EXPECT_EQ(s.explain(job_key("team-a", "waiting"), t0 + 1min).reason, reason::kWaitingForQuota);
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

}  // namespace
}  // namespace gpuaas::core::admission
