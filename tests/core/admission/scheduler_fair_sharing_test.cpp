// Fair sharing (AdmissionPolicy spec.fairSharing.enable, as Kueue's configuration): within a
// cohort the ClusterQueue with the lowest weighted dominant resource share is served first, and
// preemption moves borrowed quota towards equal weighted shares.
#include <gtest/gtest.h>

#include <map>
#include <set>
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
using test::t0;

// cq-a and cq-b hold `nominal` GPUs each; the lender holds `lent` and runs nothing.
std::string cohort(bool fair, const std::string& weight_a, const std::string& weight_b,
                   int64_t nominal, int64_t lent, const std::string& a_extra = "") {
  std::string y =
      test::flavor_yaml("gpu") +
      test::cluster_queue_yaml("cq-a", "pool", {{"gpu", nominal}},
                               "  fairSharing:\n    weight: " + weight_a + "\n" + a_extra) +
      test::cluster_queue_yaml("cq-b", "pool", {{"gpu", nominal}},
                               "  fairSharing:\n    weight: " + weight_b + "\n") +
      test::cluster_queue_yaml("lender", "pool", {{"gpu", lent}}) +
      test::local_queue_yaml("team-a", "main", "cq-a") +
      test::local_queue_yaml("team-b", "main", "cq-b");
  if (fair) y += test::admission_policy_yaml("  fairSharing:\n    enable: true\n");
  return y;
}

struct Split {
  int a = 0;
  int b = 0;
};

// Twelve 1-GPU jobs per team, all of team-a's older than team-b's; one pass.
Split one_pass(const std::string& yaml) {
  Scheduler s(test::load_policy(yaml));
  test::add_nodes(s, "gpu", 2, 8);
  for (int i = 0; i < 12; ++i) {
    test::submit(s, {.name = "a" + std::to_string(i), .created = t0 + std::chrono::seconds(i)},
                 t0 + 1min);
    test::submit(s,
                 {.name = "b" + std::to_string(i),
                  .created = t0 + 30s + std::chrono::seconds(i),
                  .ns = "team-b"},
                 t0 + 1min);
  }
  Split split;
  for (const auto& d : s.schedule(t0 + 1min)) {
    EXPECT_EQ(d.kind, Decision::Kind::kAdmit);
    (d.cluster_queue == "cq-a" ? split.a : split.b)++;
  }
  return split;
}

TEST(FairSharingTest, WithoutItTheOlderWorkloadsTakeAllTheBorrowableQuota) {
  const Split split = one_pass(cohort(false, "1", "1", 2, 6));
  EXPECT_EQ(split.a, 8);
  EXPECT_EQ(split.b, 2);
}

TEST(FairSharingTest, EqualWeightsSplitTheBorrowableQuotaEvenly) {
  const Split split = one_pass(cohort(true, "1", "1", 2, 6));
  EXPECT_EQ(split.a, 5);
  EXPECT_EQ(split.b, 5);
}

// Weight 2 halves cq-b's share: it is served until it borrows twice what cq-a borrows.
TEST(FairSharingTest, TheQueueWithTheLowerWeightedShareIsServedFirst) {
  const Split split = one_pass(cohort(true, "1", "2", 2, 6));
  EXPECT_EQ(split.a, 4);
  EXPECT_EQ(split.b, 6);
}

// cq-b borrows all 8 GPUs; cq-a's work evicts cq-b's until their shares are equal, not beyond.
TEST(FairSharingTest, PreemptionMovesQuotaTowardsEqualShares) {
  Scheduler s(test::load_policy(
      cohort(true, "1", "1", 0, 8, "  preemption:\n    reclaimWithinCohort: Any\n")));
  test::add_nodes(s, "gpu", 2, 8);
  std::map<std::string, Job> jobs;
  for (int i = 0; i < 8; ++i) {
    const Job b{
        .name = "b" + std::to_string(i), .created = t0 + std::chrono::seconds(i), .ns = "team-b"};
    jobs[job_key(b.ns, b.name)] = b;
    test::submit(s, b, t0 + 10s);
  }
  ASSERT_EQ(test::admitted(s.schedule(t0 + 10s)).size(), 8u);
  for (int i = 0; i < 6; ++i)
    test::submit(s, {.name = "a" + std::to_string(i), .created = t0 + 1min}, t0 + 1min);

  Time now = t0 + 1min;
  std::set<std::string> evicted;
  for (int round = 0; round < 20; ++round) {
    const auto ds = s.schedule(now);
    now += 1s;
    for (const auto& key : test::preempted(ds)) {
      EXPECT_EQ(key.rfind("batch/Job/team-b/", 0), 0u) << key;
      EXPECT_TRUE(evicted.insert(key).second) << key << " preempted twice";
      test::stopped(s, jobs.at(key), now);
    }
  }
  int a = 0, b = 0;
  for (int i = 0; i < 8; ++i) {
    if (i < 6 && s.explain(job_key("team-a", "a" + std::to_string(i)), now).state == "Admitted")
      ++a;
    if (s.explain(job_key("team-b", "b" + std::to_string(i)), now).state == "Admitted") ++b;
  }
  EXPECT_EQ(a, 4);
  EXPECT_EQ(b, 4);
  EXPECT_EQ(evicted.size(), 4u);
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

}  // namespace
}  // namespace gpuaas::core::admission
