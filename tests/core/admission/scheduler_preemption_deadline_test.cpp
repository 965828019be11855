// Preemption and deadlines: within a ClusterQueue, work that runs on time for its deadline is not
// a victim unless the preemptor's deadline comes first; across queues it is taken last, and a
// reclaim waits for other work's protection to end before taking it, but is never refused.
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
  return test::priority_class_yaml("low", 10) + test::priority_class_yaml("high", 100);
}

std::string one_queue(const std::string& admission_spec = "") {
  return test::flavor_yaml("gpu") + priorities() +
         test::cluster_queue_yaml("cq", "", {{"gpu", 8}},
                                  "  preemption:\n    withinClusterQueue: LowerPriority\n") +
         test::local_queue_yaml("team-a", "main", "cq") +
         (admission_spec.empty() ? "" : test::admission_policy_yaml(admission_spec));
}

std::string two_queues(const std::string& admission_spec = "") {
  return test::flavor_yaml("gpu") + priorities() +
         test::cluster_queue_yaml("cq-a", "pool", {{"gpu", 4}},
                                  "  preemption:\n    reclaimWithinCohort: Any\n") +
         test::cluster_queue_yaml("cq-b", "pool", {{"gpu", 4}}) +
         test::local_queue_yaml("team-a", "main", "cq-a") +
         test::local_queue_yaml("team-b", "main", "cq-b") +
         (admission_spec.empty() ? "" : test::admission_policy_yaml(admission_spec));
}

void admit(Scheduler& s, const Job& j, Time now) {
  test::submit(s, j, now);
  ASSERT_EQ(test::admitted(s.schedule(now)), keys_of({j.name.c_str()}, j.ns));
}

// Admitted at t0 for 3 h, due at t0 + 4h: on time.
Job on_time(const std::string& name, const std::string& ns = "team-a") {
  return {
      .name = name, .gpu = gpus(4), .created = t0, .ns = ns, .deadline = t0 + 4h, .duration = 3h};
}

TEST(PreemptionDeadlineTest, OwnQueueKeepsWorkOnTimeAndEvictsTheOtherLowerPriorityJob) {
  Scheduler s(test::load_policy(one_queue()));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, {.name = "plain", .gpu = gpus(4), .created = t0}, t0);
  // Admitted last: Kueue's order alone (most recently admitted first) would stop it.
  Job rerun = on_time("rerun");
  rerun.created = t0 + 1s;
  admit(s, rerun, t0 + 1s);
  test::submit(s, {.name = "eval", .gpu = gpus(1), .priority = "high", .created = t0 + 30min},
               t0 + 30min);
  EXPECT_EQ(test::preempted(s.schedule(t0 + 30min)), keys_of({"plain"}));
}

TEST(PreemptionDeadlineTest, OwnQueueWaitsAndSaysWhyWhenOnlyWorkOnTimeCouldMakeRoom) {
  Scheduler s(test::load_policy(one_queue()));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, {.name = "rerun", .gpu = gpus(8), .created = t0, .deadline = t0 + 4h, .duration = 3h},
        t0);
  test::submit(s, {.name = "eval", .gpu = gpus(1), .priority = "high", .created = t0 + 30min},
               t0 + 30min);
  EXPECT_TRUE(s.schedule(t0 + 30min).empty());
  const auto x = s.explain(job_key("team-a", "eval"), t0 + 30min);
  EXPECT_EQ(x.reason, reason::kWaitingForQuota);
  EXPECT_NE(x.message.find("not preempting team-a/rerun"), std::string::npos) << x.message;
  EXPECT_NE(x.message.find("on time for its deadline"), std::string::npos) << x.message;
}

TEST(PreemptionDeadlineTest, AnEarlierDeadlineMayEvictALaterOne) {
  Scheduler s(test::load_policy(one_queue()));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, {.name = "later", .gpu = gpus(8), .created = t0, .deadline = t0 + 10h, .duration = 3h},
        t0);
  test::submit(s,
               {.name = "sooner",
                .gpu = gpus(8),
                .priority = "high",
                .created = t0 + 1min,
                .deadline = t0 + 2h,
                .duration = 1h},
               t0 + 1min);
  EXPECT_EQ(test::preempted(s.schedule(t0 + 1min)), keys_of({"later"}));
}

TEST(PreemptionDeadlineTest, WorkAlreadyLateIsPreemptedByPriorityAsKueueWould) {
  Scheduler s(test::load_policy(one_queue()));
  test::add_nodes(s, "gpu", 1, 8);
  // 3 h of work due in 2 h: late whatever happens, so its deadline does not outrank priority.
  admit(s, {.name = "late", .gpu = gpus(8), .created = t0, .deadline = t0 + 2h, .duration = 3h},
        t0);
  test::submit(s, {.name = "eval", .gpu = gpus(1), .priority = "high", .created = t0 + 1min},
               t0 + 1min);
  EXPECT_EQ(test::preempted(s.schedule(t0 + 1min)), keys_of({"late"}));
}

TEST(PreemptionDeadlineTest, WithDeadlinesOffPriorityAloneDecides) {
  Scheduler s(test::load_policy(one_queue("  deadlines:\n    enable: false\n")));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, {.name = "rerun", .gpu = gpus(8), .created = t0, .deadline = t0 + 4h, .duration = 3h},
        t0);
  test::submit(s, {.name = "eval", .gpu = gpus(1), .priority = "high", .created = t0 + 30min},
               t0 + 30min);
  EXPECT_EQ(test::preempted(s.schedule(t0 + 30min)), keys_of({"rerun"}));
}

// cq-b borrows 4 of cq-a's GPUs with two jobs; cq-a takes 2 back: the one without a deadline goes,
// although Kueue's order (most recently admitted first) would pick the other.
TEST(PreemptionDeadlineTest, AReclaimTakesTheBorrowersWorkOnTimeLast) {
  Scheduler s(test::load_policy(two_queues()));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, {.name = "b-base", .gpu = gpus(4), .ns = "team-b"}, t0);
  admit(s, {.name = "b-plain", .gpu = gpus(2), .created = t0 + 1s, .ns = "team-b"}, t0 + 1s);
  Job deadline = on_time("b-due", "team-b");
  deadline.gpu = gpus(2);
  deadline.created = t0 + 2s;
  admit(s, deadline, t0 + 2s);
  test::submit(s, {.name = "a", .gpu = gpus(2), .created = t0 + 1min}, t0 + 1min);
  const auto ds = s.schedule(t0 + 1min);
  EXPECT_EQ(test::preempted(ds), keys_of({"b-plain"}, "team-b"));
}

// The other candidate is inside its protection window: the reclaim waits for the window to end
// rather than stop work on time for its deadline, and then takes the other one.
TEST(PreemptionDeadlineTest, AReclaimWaitsForProtectionRatherThanStopWorkOnTime) {
  Scheduler s(test::load_policy(two_queues("  preemption:\n    protection: 10m\n")));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, on_time("b-base", "team-b"), t0);
  Job deadline = on_time("b-due", "team-b");
  deadline.gpu = gpus(2);
  admit(s, deadline, t0);
  const Time later = t0 + 20min;
  admit(s, {.name = "b-plain", .gpu = gpus(2), .created = later, .ns = "team-b"}, later);
  test::submit(s, {.name = "a", .gpu = gpus(2), .created = later + 1min}, later + 1min);
  EXPECT_TRUE(s.schedule(later + 1min).empty());
  const auto x = s.explain(job_key("team-a", "a"), later + 1min);
  EXPECT_NE(x.message.find("protection"), std::string::npos) << x.message;
  EXPECT_TRUE(s.schedule(later + 10min - 1s).empty());
  EXPECT_EQ(test::preempted(s.schedule(later + 10min)), keys_of({"b-plain"}, "team-b"));
}

// Deadlines never keep quota from another team: with only work on time to take, it is taken.
TEST(PreemptionDeadlineTest, AReclaimStillTakesWorkOnTimeWhenNothingElseMakesRoom) {
  Scheduler s(test::load_policy(two_queues()));
  test::add_nodes(s, "gpu", 1, 8);
  admit(s, on_time("b-base", "team-b"), t0);
  admit(s, on_time("b-due", "team-b"), t0 + 1s);
  test::submit(s, {.name = "a", .gpu = gpus(4), .created = t0 + 1min}, t0 + 1min);
  EXPECT_EQ(test::preempted(s.schedule(t0 + 1min)), keys_of({"b-due"}, "team-b"));
}

}  // namespace
}  // namespace gpuaas::core::admission
