// Queueing: which ClusterQueue a workload lands in, in what order it is tried, and that one pass
// admits every workload that fits while finished or deleted work gives its quota back at once.
#include <gtest/gtest.h>

#include <algorithm>
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

// One ClusterQueue of 4 GPUs fed by team-a/main; two priorities; one 8-GPU node.
std::string one_queue(const std::string& strategy = "BestEffortFIFO") {
  return test::flavor_yaml("gpu") + test::priority_class_yaml("low", 10) +
         test::priority_class_yaml("high", 100) +
         test::cluster_queue_yaml("cq", "", {{"gpu", 4}},
                                  "  queueingStrategy: " + strategy + "\n") +
         test::local_queue_yaml("team-a", "main", "cq");
}

class QueueingTest : public ::testing::Test {
 protected:
  void SetUp() override { test::add_nodes(s, "gpu", 1, 8); }
  Scheduler s{test::load_policy(one_queue())};
};

TEST_F(QueueingTest, WorkloadWithALocalQueueInItsNamespaceIsQueuedThenAdmitted) {
  test::submit(s, {.name = "a", .gpu = gpus(2)});
  const auto x = s.explain(job_key("team-a", "a"), t0);
  ASSERT_TRUE(x.known);
  EXPECT_EQ(x.state, "Pending");
  EXPECT_EQ(x.reason, reason::kPending);
  EXPECT_EQ(x.cluster_queue, "cq");
  EXPECT_EQ(x.local_queue, "team-a/main");
  EXPECT_EQ(x.position_in_cluster_queue, 0);
  EXPECT_EQ(x.position_in_local_queue, 0);

  const auto ds = s.schedule(t0);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].kind, Decision::Kind::kAdmit);
  EXPECT_EQ(ds[0].workload, job_key("team-a", "a"));
  EXPECT_EQ(ds[0].cluster_queue, "cq");
  EXPECT_EQ(ds[0].flavor, "gpu");
  EXPECT_EQ(ds[0].rule, "admission/quota");
  EXPECT_EQ(ds[0].counts, std::vector<int64_t>{1});
  EXPECT_EQ(ds[0].node_labels.at(test::kFlavorLabel), "gpu");
  EXPECT_FALSE(ds[0].borrowing);
  EXPECT_EQ(s.explain(job_key("team-a", "a"), t0).state, "Admitted");
  EXPECT_EQ(s.explain(job_key("team-a", "a"), t0).reason, reason::kAdmitted);
  EXPECT_TRUE(s.schedule(t0).empty()) << "nothing changed: nothing to decide";
}

TEST_F(QueueingTest, MissingLocalQueueIsInadmissible) {
  test::submit(s, {.name = "typo", .queue = "mian"});
  test::submit(s, {.name = "elsewhere", .ns = "team-b"});  // no LocalQueue main in team-b
  EXPECT_TRUE(s.schedule(t0).empty());
  for (const auto& key : {job_key("team-a", "typo"), job_key("team-b", "elsewhere")}) {
    const auto x = s.explain(key, t0);
    EXPECT_EQ(x.reason, reason::kInadmissible) << key;
    EXPECT_NE(x.message.find("does not exist"), std::string::npos) << x.message;
    EXPECT_EQ(x.position_in_cluster_queue, -1);
  }
}

TEST(QueueingNamespaceTest, NamespaceSelectorRefusingTheNamespaceIsInadmissible) {
  const std::string yaml =
      test::flavor_yaml("gpu") +
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: research\n"
      "spec:\n  namespaceSelector:\n    matchLabels:\n      department: research\n" +
      test::resource_groups_yaml({{"gpu", 4}}) + "---\n" +
      test::local_queue_yaml("team-c", "main", "research");
  Scheduler s(test::load_policy(yaml));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, {.name = "a", .ns = "team-c"});
  EXPECT_TRUE(s.schedule(t0).empty());
  const auto x = s.explain(job_key("team-c", "a"), t0);
  EXPECT_EQ(x.reason, reason::kInadmissible);
  EXPECT_NE(x.message.find("namespaceSelector"), std::string::npos) << x.message;

  // The namespace gets the label: the selector takes it now.
  s.set_namespace_labels("team-c", {{"department", "research"}}, t0 + 1s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"a"}, "team-c"));
}

TEST_F(QueueingTest, PriorityComesFromTheWorkloadPriorityClass) {
  test::submit(s, {.name = "h", .gpu = gpus(8), .priority = "high"});
  test::submit(s, {.name = "l", .gpu = gpus(8), .priority = "low"});
  test::submit(s, {.name = "none", .gpu = gpus(8)});
  EXPECT_EQ(s.explain(job_key("team-a", "h"), t0).priority, 100);
  EXPECT_EQ(s.explain(job_key("team-a", "l"), t0).priority, 10);
  EXPECT_EQ(s.explain(job_key("team-a", "none"), t0).priority, 0);
}

TEST_F(QueueingTest, HigherPriorityIsAdmittedFirst) {
  test::submit(s, {.name = "old-low", .gpu = gpus(4), .priority = "low", .created = t0});
  test::submit(s, {.name = "new-high", .gpu = gpus(4), .priority = "high", .created = t0 + 1s});
  EXPECT_EQ(s.explain(job_key("team-a", "new-high"), t0 + 1s).position_in_cluster_queue, 0);
  EXPECT_EQ(s.explain(job_key("team-a", "old-low"), t0 + 1s).position_in_cluster_queue, 1);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"new-high"}));
  EXPECT_EQ(s.explain(job_key("team-a", "old-low"), t0 + 1s).reason, reason::kWaitingForQuota);
}

TEST_F(QueueingTest, FifoWithinAPriority) {
  test::submit(s, {.name = "second", .gpu = gpus(2), .created = t0 + 2s}, t0 + 3s);
  test::submit(s, {.name = "first", .gpu = gpus(2), .created = t0 + 1s}, t0 + 3s);
  test::submit(s, {.name = "third", .gpu = gpus(2), .created = t0 + 3s}, t0 + 3s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3s)), keys_of({"first", "second"}));
  const auto x = s.explain(job_key("team-a", "third"), t0 + 3s);
  EXPECT_EQ(x.reason, reason::kWaitingForQuota);
  EXPECT_EQ(x.position_in_cluster_queue, 0);
}

// Kueue's StrictFIFO: an older workload that cannot be admitted blocks newer ones that fit.
TEST(QueueingStrategyTest, StrictFifoHeadBlocksSmallerOnesBehindIt) {
  Scheduler s(test::load_policy(one_queue("StrictFIFO")));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, {.name = "running", .gpu = gpus(2), .created = t0});
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"running"}));
  test::submit(s, {.name = "big", .gpu = gpus(4), .created = t0 + 1s}, t0 + 2s);
  test::submit(s, {.name = "small", .gpu = gpus(1), .created = t0 + 2s}, t0 + 2s);
  EXPECT_TRUE(s.schedule(t0 + 2s).empty()) << "small must wait behind big";
  EXPECT_EQ(s.explain(job_key("team-a", "big"), t0 + 2s).reason, reason::kWaitingForQuota);
  EXPECT_EQ(s.explain(job_key("team-a", "small"), t0 + 2s).state, "Pending");
  // Another arrival behind the blocked head changes nothing either.
  test::submit(s, {.name = "tiny", .gpu = 500, .created = t0 + 3s}, t0 + 3s);
  EXPECT_TRUE(s.schedule(t0 + 3s).empty());
  // The head gets its quota, then the rest follow in order.
  test::finish(s, {.name = "running", .gpu = gpus(2)}, t0 + 4s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 4s)), keys_of({"big"}));
}

TEST(QueueingStrategyTest, BestEffortFifoLetsASmallerOnePass) {
  Scheduler s(test::load_policy(one_queue("BestEffortFIFO")));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, {.name = "running", .gpu = gpus(2), .created = t0});
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"running"}));
  test::submit(s, {.name = "big", .gpu = gpus(4), .created = t0 + 1s}, t0 + 2s);
  test::submit(s, {.name = "small", .gpu = gpus(1), .created = t0 + 2s}, t0 + 2s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"small"}));
  EXPECT_EQ(s.explain(job_key("team-a", "big"), t0 + 2s).reason, reason::kWaitingForQuota);
  test::submit(s, {.name = "tiny", .gpu = gpus(1), .created = t0 + 3s}, t0 + 3s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3s)), keys_of({"tiny"}));
}

// Ten ClusterQueues of 8 GPUs, ten workloads each: the 8 oldest of each are admitted in one pass.
TEST(QueueingPassTest, OnePassAdmitsEveryWorkloadThatFits) {
  std::string yaml = test::flavor_yaml("gpu");
  for (int q = 0; q < 10; ++q) {
    const std::string n = std::to_string(q);
    yaml += test::cluster_queue_yaml("cq-" + n, "", {{"gpu", 8}}) +
            test::local_queue_yaml("ns-" + n, "main", "cq-" + n);
  }
  Scheduler s(test::load_policy(yaml));
  test::add_nodes(s, "gpu", 10, 8);
  // Submitted newest first so that arrival order is not what decides.
  for (int i = 9; i >= 0; --i)
    for (int q = 0; q < 10; ++q)
      test::submit(s,
                   {.name = "w" + std::to_string(i),
                    .created = t0 + std::chrono::seconds(i),
                    .ns = "ns-" + std::to_string(q)},
                   t0 + 10s);
  const auto ds = s.schedule(t0 + 10s);
  auto got = test::admitted(ds);
  ASSERT_EQ(got.size(), 80u);
  std::vector<std::string> want;
  for (int q = 0; q < 10; ++q)
    for (int i = 0; i < 8; ++i)
      want.push_back(job_key("ns-" + std::to_string(q), "w" + std::to_string(i)));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  for (int q = 0; q < 10; ++q) {
    const auto x = s.explain(job_key("ns-" + std::to_string(q), "w9"), t0 + 10s);
    EXPECT_EQ(x.reason, reason::kWaitingForQuota);
    EXPECT_EQ(x.position_in_cluster_queue, 1);
  }
  EXPECT_TRUE(s.schedule(t0 + 10s).empty());
  EXPECT_EQ(s.stats().admitted, 80);
  EXPECT_EQ(s.stats().pending, 20);
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

TEST_F(QueueingTest, FinishReturnsQuotaAndTheNextIsAdmittedInTheNextPass) {
  const Job a{.name = "a", .gpu = gpus(4), .created = t0};
  const Job b{.name = "b", .gpu = gpus(4), .created = t0 + 1s};
  test::submit(s, a);
  test::submit(s, b, t0 + 1s);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"a"}));
  // Running reports change nothing.
  test::observe(s, a, ObservedState::kRunning, t0 + 2s);
  EXPECT_TRUE(s.schedule(t0 + 2s).empty());
  test::finish(s, a, t0 + 1h);
  EXPECT_FALSE(s.explain(job_key("team-a", "a"), t0 + 1h).known);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 1h)), keys_of({"b"}));
}

TEST_F(QueueingTest, DeleteReturnsQuotaAndTheNextIsAdmittedInTheNextPass) {
  test::submit(s, {.name = "a", .gpu = gpus(4), .created = t0});
  test::submit(s, {.name = "b", .gpu = gpus(4), .created = t0 + 1s}, t0 + 1s);
  test::submit(s, {.name = "c", .gpu = gpus(4), .created = t0 + 2s}, t0 + 2s);
  ASSERT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"a"}));
  // Deleting a pending one frees nothing; deleting the admitted one does.
  s.remove_workload(job_key("team-a", "b"), t0 + 3s);
  EXPECT_TRUE(s.schedule(t0 + 3s).empty());
  s.remove_workload(job_key("team-a", "a"), t0 + 4s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 4s)), keys_of({"c"}));
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

// stopPolicy Hold: nothing new is admitted; what runs keeps running.
TEST(QueueingStopTest, HeldClusterQueueAdmitsNothingNew) {
  auto policy = [](const std::string& stop) {
    return test::flavor_yaml("gpu") +
           test::cluster_queue_yaml("cq", "", {{"gpu", 4}}, "  stopPolicy: " + stop + "\n") +
           test::local_queue_yaml("team-a", "main", "cq");
  };
  Scheduler s(test::load_policy(policy("None")));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, {.name = "running", .gpu = gpus(2)});
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"running"}));
  s.set_policy(test::load_policy(policy("Hold")), t0 + 1s);
  test::submit(s, {.name = "new", .gpu = gpus(1), .created = t0 + 1s}, t0 + 1s);
  EXPECT_TRUE(s.schedule(t0 + 1s).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "new"), t0 + 1s).reason, reason::kStopped);
  EXPECT_EQ(s.explain(job_key("team-a", "running"), t0 + 1s).state, "Admitted");
  s.set_policy(test::load_policy(policy("None")), t0 + 2s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"new"}));
}

}  // namespace
}  // namespace gpuaas::core::admission
