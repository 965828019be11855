// Preemption as Kueue documents it (concepts/preemption.md): withinClusterQueue,
// reclaimWithinCohort, borrowWithinCohort, the candidate order and the minimal victim set; the
// preemptor waits until its victims are seen stopped.
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

std::string priorities() {
  return test::priority_class_yaml("low", 10) + test::priority_class_yaml("mid", 50) +
         test::priority_class_yaml("high", 100);
}

std::string within(const std::string& policy, int64_t nominal) {
  return test::flavor_yaml("gpu") + priorities() +
         test::cluster_queue_yaml("cq", "", {{"gpu", nominal}},
                                  "  preemption:\n    withinClusterQueue: " + policy + "\n") +
         test::local_queue_yaml("team-a", "main", "cq");
}

// Admits one job per pass, a second apart, so that admission times differ.
void admit_in_order(Scheduler& s, const std::vector<Job>& jobs, Time start) {
  Time now = start;
  for (const auto& j : jobs) {
    test::submit(s, j, now);
    ASSERT_EQ(test::admitted(s.schedule(now)), keys_of({j.name.c_str()}, j.ns));
    now += 1s;
  }
}

void expect_invariants(const Scheduler& s) {
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

// Victims of 4, 2 and 1 GPUs (the 1 admitted last); a need of 2: only the 2-GPU one goes.
TEST(PreemptionTest, WithinClusterQueueLowerPriorityEvictsOnlyWhatIsNeeded) {
  Scheduler s(test::load_policy(within("LowerPriority", 7)));
  test::add_nodes(s, "gpu", 2, 8);
  const Job v4{.name = "v4", .gpu = gpus(4), .priority = "low"};
  const Job v2{.name = "v2", .gpu = gpus(2), .priority = "low"};
  const Job v1{.name = "v1", .gpu = gpus(1), .priority = "low"};
  admit_in_order(s, {v4, v2, v1}, t0);

  const Job p{.name = "p", .gpu = gpus(2), .priority = "high", .created = t0 + 10s};
  test::submit(s, p, t0 + 10s);
  const auto ds = s.schedule(t0 + 10s);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].kind, Decision::Kind::kPreempt);
  EXPECT_EQ(ds[0].workload, job_key("team-a", "v2"));
  EXPECT_EQ(ds[0].rule, "preemption/withinClusterQueue");
  EXPECT_EQ(ds[0].preemptor, job_key("team-a", "p"));
  EXPECT_EQ(ds[0].cluster_queue, "cq");
  EXPECT_EQ(s.explain(job_key("team-a", "v2"), t0 + 10s).state, "Evicting");
  auto x = s.explain(job_key("team-a", "p"), t0 + 10s);
  EXPECT_EQ(x.reason, reason::kWaitingForPreemptedWorkloads);
  EXPECT_EQ(x.holder, "quota");

  // The victim has not stopped yet: nothing more happens, however often we ask.
  EXPECT_TRUE(s.schedule(t0 + 11s).empty());
  test::submit(s, {.name = "other", .gpu = gpus(1), .priority = "low", .created = t0 + 12s},
               t0 + 12s);
  EXPECT_TRUE(s.schedule(t0 + 12s).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "p"), t0 + 12s).reason,
            reason::kWaitingForPreemptedWorkloads);
  expect_invariants(s);

  // Seen suspended: its quota returns, it queues again and the preemptor is admitted.
  test::stopped(s, v2, t0 + 20s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 20s)), keys_of({"p"}));
  x = s.explain(job_key("team-a", "v2"), t0 + 20s);
  EXPECT_EQ(x.state, "Pending");
  EXPECT_EQ(x.reason, reason::kWaitingForQuota);
  EXPECT_TRUE(s.schedule(t0 + 21s).empty());
  expect_invariants(s);
}

TEST(PreemptionTest, LowerPriorityNeverEvictsEqualPriority) {
  Scheduler s(test::load_policy(within("LowerPriority", 4)));
  test::add_nodes(s, "gpu", 1, 8);
  admit_in_order(s, {{.name = "running", .gpu = gpus(4), .priority = "mid", .created = t0 + 5s}},
                 t0 + 5s);
  test::submit(s, {.name = "older", .gpu = gpus(4), .priority = "mid", .created = t0}, t0 + 6s);
  EXPECT_TRUE(s.schedule(t0 + 6s).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "older"), t0 + 6s).reason, reason::kWaitingForQuota);
}

// LowerOrNewerEqualPriority: an equal-priority workload queued later may be evicted for an older
// one; the older one is never evicted for the newer.
TEST(PreemptionTest, LowerOrNewerEqualPriorityEvictsTheNewerOne) {
  Scheduler s(test::load_policy(within("LowerOrNewerEqualPriority", 4)));
  test::add_nodes(s, "gpu", 1, 8);
  const Job newer{.name = "newer", .gpu = gpus(4), .priority = "mid", .created = t0 + 5s};
  admit_in_order(s, {newer}, t0 + 5s);
  test::submit(s, {.name = "older", .gpu = gpus(4), .priority = "mid", .created = t0}, t0 + 6s);
  const auto ds = s.schedule(t0 + 6s);
  EXPECT_EQ(test::preempted(ds), keys_of({"newer"}));
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].rule, "preemption/withinClusterQueue");
  test::stopped(s, newer, t0 + 7s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 7s)), keys_of({"older"}));
  // The newer one waits; it does not evict the older one back.
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(s.schedule(t0 + 8s + std::chrono::minutes(i)).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "newer"), t0 + 20min).reason, reason::kWaitingForQuota);
}

TEST(PreemptionTest, NeverPreemptsWithoutAPolicy) {
  Scheduler s(test::load_policy(within("Never", 4)));
  test::add_nodes(s, "gpu", 1, 8);
  admit_in_order(s, {{.name = "low", .gpu = gpus(4), .priority = "low"}}, t0);
  test::submit(s, {.name = "high", .gpu = gpus(4), .priority = "high"}, t0 + 1s);
  EXPECT_TRUE(s.schedule(t0 + 1s).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "high"), t0 + 1s).reason, reason::kWaitingForQuota);
}

// Two ClusterQueues of 4 GPUs in a cohort; `a_preemption` is cq-a's preemption block.
std::string cohort_of_two(const std::string& a_preemption, int64_t a_nominal = 4,
                          int64_t b_nominal = 4) {
  return test::flavor_yaml("gpu") + priorities() +
         test::cluster_queue_yaml("cq-a", "pool", {{"gpu", a_nominal}},
                                  "  preemption:\n" + a_preemption) +
         test::cluster_queue_yaml("cq-b", "pool", {{"gpu", b_nominal}}) +
         test::local_queue_yaml("team-a", "main", "cq-a") +
         test::local_queue_yaml("team-b", "main", "cq-b");
}

// cq-b borrows cq-a's quota; cq-a wants it back for work within its nominal quota.
TEST(PreemptionTest, ReclaimWithinCohortTakesNominalQuotaBackFromABorrower) {
  Scheduler s(test::load_policy(cohort_of_two("    reclaimWithinCohort: Any\n")));
  test::add_nodes(s, "gpu", 2, 8);
  const Job b1{.name = "b1", .gpu = gpus(4), .priority = "high", .ns = "team-b"};
  const Job b2{.name = "b2", .gpu = gpus(4), .priority = "high", .ns = "team-b"};
  admit_in_order(s, {b1, b2}, t0);  // b2 borrows all of cq-a's quota

  test::submit(s, {.name = "a", .gpu = gpus(4), .priority = "low", .created = t0 + 10s}, t0 + 10s);
  const auto ds = s.schedule(t0 + 10s);
  ASSERT_EQ(ds.size(), 1u);
  // Any: even a higher priority; of cq-b's two the most recently admitted goes.
  EXPECT_EQ(ds[0].kind, Decision::Kind::kPreempt);
  EXPECT_EQ(ds[0].workload, job_key("team-b", "b2"));
  EXPECT_EQ(ds[0].rule, "preemption/reclaimWithinCohort");
  EXPECT_EQ(ds[0].cluster_queue, "cq-b");
  test::stopped(s, b2, t0 + 11s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 11s)), keys_of({"a"}));
  // b2 queues again and cannot take the quota back (cq-b has no preemption policy).
  EXPECT_TRUE(s.schedule(t0 + 12s).empty());
  EXPECT_EQ(s.explain(job_key("team-b", "b2"), t0 + 12s).reason, reason::kWaitingForQuota);
  expect_invariants(s);
}

TEST(PreemptionTest, ReclaimWithinCohortLowerPrioritySparesHigherPriorityBorrowers) {
  Scheduler s(test::load_policy(cohort_of_two("    reclaimWithinCohort: LowerPriority\n")));
  test::add_nodes(s, "gpu", 2, 8);
  admit_in_order(s, {{.name = "b", .gpu = gpus(8), .priority = "high", .ns = "team-b"}}, t0);
  test::submit(s, {.name = "a", .gpu = gpus(4), .priority = "mid"}, t0 + 1s);
  EXPECT_TRUE(s.schedule(t0 + 1s).empty());
  test::submit(s, {.name = "a-high", .gpu = gpus(4), .priority = "high"}, t0 + 2s);
  EXPECT_TRUE(s.schedule(t0 + 2s).empty()) << "equal priority is not lower";
  EXPECT_EQ(s.explain(job_key("team-a", "a-high"), t0 + 2s).reason, reason::kWaitingForQuota);
}

// Kueue's candidate order: workloads of borrowing ClusterQueues first, then the lowest priority,
// then the most recently admitted. cq-a's own low-priority workload is spared.
TEST(PreemptionTest, CandidatesFromBorrowingQueuesComeBeforeOwnLowerPriority) {
  Scheduler s(test::load_policy(
      cohort_of_two("    withinClusterQueue: LowerPriority\n    reclaimWithinCohort: Any\n")));
  test::add_nodes(s, "gpu", 2, 8);
  admit_in_order(s,
                 {{.name = "a-low", .gpu = gpus(2), .priority = "low"},
                  {.name = "b1", .gpu = gpus(4), .priority = "mid", .ns = "team-b"},
                  {.name = "b2", .gpu = gpus(2), .priority = "mid", .ns = "team-b"}},
                 t0);
  test::submit(s, {.name = "a-high", .gpu = gpus(2), .priority = "high"}, t0 + 10s);
  const auto ds = s.schedule(t0 + 10s);
  EXPECT_EQ(test::preempted(ds), keys_of({"b2"}, "team-b"));
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].rule, "preemption/reclaimWithinCohort");
}

// Classic preemption: a workload that would borrow may not evict other queues' workloads unless
// borrowWithinCohort allows it (lower priority, up to maxPriorityThreshold).
TEST(PreemptionTest, BorrowingPreemptorNeedsBorrowWithinCohort) {
  Scheduler s(test::load_policy(cohort_of_two("    reclaimWithinCohort: Any\n")));
  test::add_nodes(s, "gpu", 2, 8);
  admit_in_order(s, {{.name = "b", .gpu = gpus(6), .priority = "low", .ns = "team-b"}}, t0);
  // 6 GPUs: 2 more than cq-a's nominal quota.
  test::submit(s, {.name = "a", .gpu = gpus(6), .priority = "high"}, t0 + 1s);
  EXPECT_TRUE(s.schedule(t0 + 1s).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "a"), t0 + 1s).reason, reason::kWaitingForQuota);
}

TEST(PreemptionTest, BorrowWithinCohortEvictsLowerPriorityBorrowers) {
  Scheduler s(test::load_policy(
      cohort_of_two("    reclaimWithinCohort: Any\n    borrowWithinCohort:\n"
                    "      policy: LowerPriority\n      maxPriorityThreshold: 10\n")));
  test::add_nodes(s, "gpu", 2, 8);
  const Job b{.name = "b", .gpu = gpus(6), .priority = "low", .ns = "team-b"};
  admit_in_order(s, {b}, t0);
  test::submit(s, {.name = "a", .gpu = gpus(6), .priority = "high"}, t0 + 1s);
  const auto ds = s.schedule(t0 + 1s);
  ASSERT_EQ(test::preempted(ds), keys_of({"b"}, "team-b"));
  EXPECT_EQ(ds[0].rule, "preemption/borrowWithinCohort");
  test::stopped(s, b, t0 + 2s);
  const auto admitted = s.schedule(t0 + 2s);
  ASSERT_EQ(test::admitted(admitted), keys_of({"a"}));
  EXPECT_TRUE(admitted[0].borrowing);
}

TEST(PreemptionTest, BorrowWithinCohortRespectsMaxPriorityThreshold) {
  Scheduler s(test::load_policy(
      cohort_of_two("    reclaimWithinCohort: Any\n    borrowWithinCohort:\n"
                    "      policy: LowerPriority\n      maxPriorityThreshold: 10\n")));
  test::add_nodes(s, "gpu", 2, 8);
  admit_in_order(s, {{.name = "b", .gpu = gpus(6), .priority = "mid", .ns = "team-b"}}, t0);
  test::submit(s, {.name = "a", .gpu = gpus(6), .priority = "high"}, t0 + 1s);
  EXPECT_TRUE(s.schedule(t0 + 1s).empty()) << "mid (50) is above the threshold (10)";
}

// Kueue takes cohort candidates only from ClusterQueues that borrow: cq-b within its nominal
// quota keeps its workloads, whatever borrowWithinCohort says.
TEST(PreemptionTest, NeverEvictsFromAQueueWithinItsNominalQuota) {
  Scheduler s(
      test::load_policy(cohort_of_two("    reclaimWithinCohort: Any\n    borrowWithinCohort:\n"
                                      "      policy: LowerPriority\n",
                                      2, 6)));
  test::add_nodes(s, "gpu", 2, 8);
  admit_in_order(s, {{.name = "b", .gpu = gpus(4), .priority = "low", .ns = "team-b"}}, t0);
  test::submit(s, {.name = "a", .gpu = gpus(6), .priority = "high"}, t0 + 1s);
  EXPECT_TRUE(s.schedule(t0 + 1s).empty());
  EXPECT_EQ(s.explain(job_key("team-b", "b"), t0 + 1s).state, "Admitted");
}

// A victim may end on its own before it is seen suspended: that makes the room as well.
TEST(PreemptionTest, AVictimThatFinishesInsteadOfStoppingAlsoMakesRoom) {
  Scheduler s(test::load_policy(within("LowerPriority", 4)));
  test::add_nodes(s, "gpu", 1, 8);
  const Job victim{.name = "victim", .gpu = gpus(4), .priority = "low"};
  admit_in_order(s, {victim}, t0);
  test::submit(s, {.name = "p", .gpu = gpus(4), .priority = "high"}, t0 + 1s);
  ASSERT_EQ(test::preempted(s.schedule(t0 + 1s)), keys_of({"victim"}));
  test::finish(s, victim, t0 + 2s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"p"}));
  expect_invariants(s);
}

// The preemptor goes away while its victim stops: the victim queues again and gets its room
// back; nothing waits for a preemptor that no longer exists.
TEST(PreemptionTest, DeletedPreemptorLeavesTheRoomToOthers) {
  Scheduler s(test::load_policy(within("LowerPriority", 4)));
  test::add_nodes(s, "gpu", 1, 8);
  const Job victim{.name = "victim", .gpu = gpus(4), .priority = "low"};
  admit_in_order(s, {victim}, t0);
  test::submit(s, {.name = "p", .gpu = gpus(4), .priority = "high"}, t0 + 1s);
  ASSERT_EQ(test::preempted(s.schedule(t0 + 1s)), keys_of({"victim"}));
  s.remove_workload(job_key("team-a", "p"), t0 + 2s);
  test::stopped(s, victim, t0 + 3s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3s)), keys_of({"victim"}));
  expect_invariants(s);
}

}  // namespace
}  // namespace gpuaas::core::admission
