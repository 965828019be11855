// Idle reclaim's ledger (idle_reservation.cpp): a workload parked at zero keeps its quota; lent,
// its quota and nodes serve others until it wakes and takes them back by preemption, once the
// preempted ones have stopped; a released reservation returns the quota.
#include <gtest/gtest.h>

#include <string>

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

// Two ClusterQueues of 4 GPUs in one cohort, on 8 GPUs of nodes.
std::string cohort_policy() {
  return test::flavor_yaml("gpu") + test::cluster_queue_yaml("serving", "all", {{"gpu", 4}}) +
         test::cluster_queue_yaml("batch", "all", {{"gpu", 4}}) +
         test::local_queue_yaml("team-a", "main", "serving") +
         test::local_queue_yaml("team-b", "main", "batch");
}

void expect_invariants(const Scheduler& s) {
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

const std::string kOwner = job_key("team-a", "owner");

// team-a's 4-GPU "owner" admitted at t0 on one 8-GPU node, then parked a minute later.
void admit_and_park(Scheduler& s, bool lend) {
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, Job{.name = "owner", .gpu = gpus(4), .ns = "team-a"}, t0);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"owner"}, "team-a"));
  ASSERT_TRUE(s.park(kOwner, lend, t0 + 1min));
}

int64_t usage(const Scheduler& s, const std::string& cq) {
  for (const auto& q : s.cluster_queue_usage())
    if (q.name == cq)
      for (const auto& r : q.resources)
        if (r.resource == "nvidia.com/gpu") return r.usage_milli;
  return -1;
}

TEST(IdleReservationTest, ParkedKeepsItsQuotaAndNodes) {
  Scheduler s(test::load_policy(cohort_policy()));
  admit_and_park(s, false);
  EXPECT_TRUE(s.parked(kOwner));
  const auto x = s.explain(kOwner, t0 + 1min);
  EXPECT_EQ(x.state, "ScaledToZero");
  EXPECT_EQ(x.reason, reason::kScaledToZero);
  EXPECT_TRUE(x.quota_reserved_idle);
  EXPECT_FALSE(x.quota_lent);
  EXPECT_EQ(usage(s, "serving"), gpus(4));
  // Another team's 8-GPU job cannot take the reserved quota (4 of the cohort's 8 are held).
  const Job big{.name = "big", .gpu = gpus(8), .ns = "team-b"};
  test::submit(s, big, t0 + 2min);
  EXPECT_TRUE(test::admitted(s.schedule(t0 + 2min)).empty());
  // Waking takes nothing from anyone.
  EXPECT_TRUE(s.unpark(kOwner, t0 + 3min).empty());
  EXPECT_EQ(s.explain(kOwner, t0 + 3min).state, "Admitted");
  expect_invariants(s);
}

TEST(IdleReservationTest, LentQuotaServesOthersAndIsTakenBackOnWake) {
  Scheduler s(test::load_policy(cohort_policy()));
  test::add_nodes(s, "gpu", 1, 8);
  const Job owner{.name = "owner", .gpu = gpus(4), .ns = "team-a"};
  const Job early{.name = "early", .gpu = gpus(4), .ns = "team-b"};
  test::submit(s, owner, t0);
  test::submit(s, early, t0);
  ASSERT_EQ(s.schedule(t0).size(), 2u);
  ASSERT_TRUE(s.park(kOwner, true, t0 + 1min));
  EXPECT_TRUE(s.explain(kOwner, t0 + 1min).quota_lent);
  EXPECT_EQ(usage(s, "serving"), 0);
  // team-b borrows the lent GPUs: admitted while the owner is at zero.
  const Job loan{.name = "loan", .gpu = gpus(4), .ns = "team-b"};
  test::submit(s, loan, t0 + 2min);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 2min)), keys_of({"loan"}, "team-b"));
  expect_invariants(s);
  // The owner wakes: the loan (admitted after it parked) is preempted, not the earlier job.
  const auto ds = s.unpark(kOwner, t0 + 3min);
  ASSERT_EQ(test::preempted(ds), keys_of({"loan"}, "team-b"));
  EXPECT_EQ(ds.front().rule, "reclaim/lend");
  EXPECT_EQ(ds.front().preemptor, kOwner);
  // Usage is reserved quota: the loan holds it until seen stopped, so the owner waits (its pods
  // do not open) and no queue or cohort is ever above its quota.
  EXPECT_TRUE(s.waking(kOwner));
  EXPECT_FALSE(s.parked(kOwner));
  EXPECT_FALSE(s.running(kOwner));
  EXPECT_EQ(usage(s, "serving"), 0);
  const auto x = s.explain(kOwner, t0 + 3min);
  EXPECT_EQ(x.state, "Waking");
  EXPECT_EQ(x.reason, reason::kWaitingForPreemptedWorkloads);
  EXPECT_NE(x.message.find("1 workload(s) that ran on its lent quota"), std::string::npos)
      << x.message;
  expect_invariants(s);
  EXPECT_TRUE(s.schedule(t0 + 3min).empty());
  // Another job queued meanwhile does not take the quota the loan gives back.
  const Job thief{.name = "thief", .gpu = gpus(4), .ns = "team-b"};
  test::submit(s, thief, t0 + 3min);
  EXPECT_TRUE(test::admitted(s.schedule(t0 + 3min)).empty());
  test::stopped(s, loan, t0 + 4min);
  const auto back = s.schedule(t0 + 4min);
  ASSERT_EQ(test::admitted(back), std::vector<std::string>{kOwner});
  EXPECT_EQ(back.front().rule, "reclaim/wake");
  EXPECT_TRUE(s.running(kOwner));
  EXPECT_EQ(usage(s, "serving"), gpus(4));
  EXPECT_EQ(s.explain(kOwner, t0 + 4min).state, "Admitted");
  EXPECT_EQ(s.explain(job_key("team-b", "loan"), t0 + 4min).state, "Pending");
  EXPECT_EQ(s.explain(job_key("team-b", "thief"), t0 + 4min).state, "Pending");
  expect_invariants(s);
}

// Deleted while it waits for its loan: the preempted ones still stop, nothing is admitted for
// it, and its quota is free for others.
TEST(IdleReservationTest, AWakingOwnerDeletedWhileItWaitsTakesNothing) {
  Scheduler s(test::load_policy(cohort_policy()));
  admit_and_park(s, true);
  const Job loan{.name = "loan", .gpu = gpus(8), .ns = "team-b"};
  test::submit(s, loan, t0 + 2min);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 2min)), keys_of({"loan"}, "team-b"));
  ASSERT_EQ(test::preempted(s.unpark(kOwner, t0 + 3min)), keys_of({"loan"}, "team-b"));
  s.remove_workload(kOwner, t0 + 4min);
  test::stopped(s, loan, t0 + 5min);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 5min)), keys_of({"loan"}, "team-b"));
  expect_invariants(s);
}

TEST(IdleReservationTest, WakeWithoutLoansPreemptsNothing) {
  Scheduler s(test::load_policy(cohort_policy()));
  admit_and_park(s, true);
  const Job small{.name = "small", .gpu = gpus(2), .ns = "team-b"};
  test::submit(s, small, t0 + 2min);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 2min)), keys_of({"small"}, "team-b"));
  // batch's own 4 GPUs hold `small`: nothing needs to go.
  EXPECT_TRUE(s.unpark(kOwner, t0 + 3min).empty());
  expect_invariants(s);
}

TEST(IdleReservationTest, ReleasingAParkedReservationReturnsTheQuota) {
  for (bool lend : {false, true}) {
    Scheduler s(test::load_policy(cohort_policy()));
    admit_and_park(s, lend);
    s.remove_workload(kOwner, t0 + 30min);
    EXPECT_EQ(usage(s, "serving"), 0) << lend;
    const Job big{.name = "big", .gpu = gpus(8), .ns = "team-b"};
    test::submit(s, big, t0 + 31min);
    EXPECT_EQ(test::admitted(s.schedule(t0 + 31min)), keys_of({"big"}, "team-b")) << lend;
    expect_invariants(s);
  }
}

TEST(IdleReservationTest, OnlyAdmittedWorkloadsPark) {
  Scheduler s(test::load_policy(cohort_policy()));
  const Job w{.name = "w", .gpu = gpus(4), .ns = "team-a"};
  test::submit(s, w, t0);  // no nodes: it waits
  s.schedule(t0);
  EXPECT_FALSE(s.park(job_key("team-a", "w"), false, t0));
  EXPECT_FALSE(s.park(job_key("team-a", "nobody"), false, t0));
  EXPECT_TRUE(s.unpark(job_key("team-a", "w"), t0).empty());
}

TEST(IdleReservationTest, ParkedSurvivesAPolicyReload) {
  Scheduler s(test::load_policy(cohort_policy()));
  admit_and_park(s, true);
  s.set_policy(test::load_policy(cohort_policy()), t0 + 2min);
  EXPECT_TRUE(s.parked(kOwner));
  EXPECT_EQ(usage(s, "serving"), 0);  // still lent
  expect_invariants(s);
  s.unpark(kOwner, t0 + 3min);
  EXPECT_EQ(usage(s, "serving"), gpus(4));
  expect_invariants(s);
}

// A lent reservation holds nothing in the tree or on nodes: it is never a preemption victim, even
// as the lowest priority admitted workload (evicting it would free nothing and take its usage
// out a second time).
TEST(IdleReservationTest, ALentReservationIsNeverAPreemptionVictim) {
  Scheduler s(test::load_policy(
      test::flavor_yaml("gpu") + test::priority_class_yaml("low", 10) +
      test::priority_class_yaml("mid", 100) + test::priority_class_yaml("high", 1000) +
      test::cluster_queue_yaml("serving", "", {{"gpu", 4}},
                               "  preemption:\n    withinClusterQueue: LowerPriority\n") +
      test::local_queue_yaml("team-a", "main", "serving")));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, Job{.name = "owner", .gpu = gpus(4), .priority = "low"}, t0);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"owner"}, "team-a"));
  ASSERT_TRUE(s.park(kOwner, true, t0 + 1min));
  test::submit(s, Job{.name = "filler", .gpu = gpus(4), .priority = "mid"}, t0 + 2min);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 2min)), keys_of({"filler"}, "team-a"));
  test::submit(s, Job{.name = "urgent", .gpu = gpus(4), .priority = "high"}, t0 + 3min);
  EXPECT_EQ(test::preempted(s.schedule(t0 + 3min)), keys_of({"filler"}, "team-a"));
  EXPECT_TRUE(s.parked(kOwner));
  EXPECT_GE(usage(s, "serving"), 0);
  expect_invariants(s);
}

}  // namespace
}  // namespace gpuaas::core::admission
