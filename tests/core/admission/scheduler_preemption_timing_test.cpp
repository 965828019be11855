// Preemption over time: the protection window and the delay of the AdmissionPolicy, and that two
// queues reclaiming from each other never preempt back and forth.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
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

std::string within_with(const std::string& admission_spec) {
  return test::flavor_yaml("gpu") + test::priority_class_yaml("low", 10) +
         test::priority_class_yaml("high", 100) +
         test::cluster_queue_yaml("cq", "", {{"gpu", 4}},
                                  "  preemption:\n    withinClusterQueue: LowerPriority\n") +
         test::local_queue_yaml("team-a", "main", "cq") +
         test::admission_policy_yaml(admission_spec);
}

TEST(PreemptionTimingTest, ProtectionKeepsARecentlyAdmittedVictim) {
  Scheduler s(test::load_policy(within_with("  preemption:\n    protection: 10m\n")));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, {.name = "victim", .gpu = gpus(4), .priority = "low"});
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"victim"}));

  test::submit(s, {.name = "urgent", .gpu = gpus(4), .priority = "high", .created = t0 + 1min},
               t0 + 1min);
  EXPECT_TRUE(s.schedule(t0 + 1min).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "urgent"), t0 + 1min).reason, reason::kWaitingForQuota);
  EXPECT_TRUE(s.schedule(t0 + 5min).empty());
  EXPECT_TRUE(s.schedule(t0 + 10min - 1s).empty());
  // The window ends: the next pass preempts without any other event.
  const auto ds = s.schedule(t0 + 10min);
  EXPECT_EQ(test::preempted(ds), keys_of({"victim"}));
}

TEST(PreemptionTimingTest, DelayHoldsPreemptionUntilItHasPassed) {
  Scheduler s(test::load_policy(within_with("  preemption:\n    delay: 5m\n")));
  test::add_nodes(s, "gpu", 1, 8);
  const Job victim{.name = "victim", .gpu = gpus(4), .priority = "low"};
  test::submit(s, victim);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"victim"}));

  test::submit(s, {.name = "urgent", .gpu = gpus(4), .priority = "high", .created = t0 + 1min},
               t0 + 1min);
  EXPECT_TRUE(s.schedule(t0 + 1min).empty());
  auto x = s.explain(job_key("team-a", "urgent"), t0 + 1min);
  EXPECT_EQ(x.reason, reason::kWaitingForPreemptionDelay) << x.message;
  EXPECT_EQ(x.holder, "quota");
  EXPECT_TRUE(s.schedule(t0 + 3min).empty());
  // Another event in between does not shorten the delay.
  test::submit(s, {.name = "other", .gpu = gpus(4), .priority = "low", .created = t0 + 4min},
               t0 + 4min);
  EXPECT_TRUE(s.schedule(t0 + 4min).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "urgent"), t0 + 4min).reason,
            reason::kWaitingForPreemptionDelay);
  const auto ds = s.schedule(t0 + 6min);
  EXPECT_EQ(test::preempted(ds), keys_of({"victim"}));
  test::stopped(s, victim, t0 + 7min);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 7min)), keys_of({"urgent"}));
}

TEST(PreemptionTimingTest, QuotaFreedDuringTheDelayAdmitsWithoutPreempting) {
  Scheduler s(test::load_policy(within_with("  preemption:\n    delay: 5m\n")));
  test::add_nodes(s, "gpu", 1, 8);
  const Job victim{.name = "victim", .gpu = gpus(4), .priority = "low"};
  test::submit(s, victim);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"victim"}));
  test::submit(s, {.name = "urgent", .gpu = gpus(4), .priority = "high"}, t0 + 1min);
  EXPECT_TRUE(s.schedule(t0 + 1min).empty());
  test::finish(s, victim, t0 + 2min);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2min)), keys_of({"urgent"}));
  EXPECT_TRUE(s.schedule(t0 + 10min).empty());
}

// Equal priorities in two ClusterQueues that may reclaim from each other (Any): each eviction
// is answered by the victim queueing again, never by it evicting its preemptor.
TEST(PreemptionTimingTest, NoPreemptionLoopBetweenTwoReclaimingQueues) {
  const std::string reclaim = "  preemption:\n    reclaimWithinCohort: Any\n";
  Scheduler s(test::load_policy(test::flavor_yaml("gpu") +
                                test::cluster_queue_yaml("cq-a", "pool", {{"gpu", 4}}, reclaim) +
                                test::cluster_queue_yaml("cq-b", "pool", {{"gpu", 4}}, reclaim) +
                                test::local_queue_yaml("team-a", "main", "cq-a") +
                                test::local_queue_yaml("team-b", "main", "cq-b")));
  test::add_nodes(s, "gpu", 1, 8);
  std::map<std::string, Job> jobs;
  auto add = [&](const Job& j, Time now) {
    jobs[job_key(j.ns, j.name)] = j;
    test::submit(s, j, now);
  };
  // cq-a takes all 8 GPUs, then cq-b wants its 4 back, twice over.
  add({.name = "a1", .gpu = gpus(4)}, t0);
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"a1"}));
  add({.name = "a2", .gpu = gpus(4), .created = t0 + 1s}, t0 + 1s);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"a2"}));
  add({.name = "b1", .gpu = gpus(2), .created = t0 + 2s, .ns = "team-b"}, t0 + 2s);
  add({.name = "b2", .gpu = gpus(2), .created = t0 + 3s, .ns = "team-b"}, t0 + 3s);

  std::set<std::pair<std::string, std::string>> pairs;  // (preemptor, victim)
  int preemptions = 0;
  Time now = t0 + 3s;
  for (int pass = 0; pass < 200; ++pass) {
    for (const auto& d : s.schedule(now)) {
      if (d.kind != Decision::Kind::kPreempt) continue;
      ++preemptions;
      EXPECT_FALSE(pairs.count({d.workload, d.preemptor}))
          << d.preemptor << " preempted " << d.workload << " which had preempted it";
      pairs.insert({d.preemptor, d.workload});
      test::stopped(s, jobs.at(d.workload), now + 1s);
    }
    now += 1min;
  }
  EXPECT_EQ(preemptions, 1) << "one of cq-a's borrowers goes, once";
  EXPECT_EQ(s.explain(job_key("team-a", "a2"), now).state, "Pending");
  EXPECT_EQ(s.explain(job_key("team-b", "b1"), now).state, "Admitted");
  EXPECT_EQ(s.explain(job_key("team-b", "b2"), now).state, "Admitted");
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

}  // namespace
}  // namespace gpuaas::core::admission
