// What the queue and quota metrics read from the engine (Scheduler::cluster_queue_usage): pending
// split into active and inadmissible as Kueue splits them, pending GPUs by flavor, borrowing and
// lending limits, the reservation of a lent idle workload beside the usage, the weighted share.
#include <gtest/gtest.h>

#include <string>

#include "gpuaas/admission/scheduler.hpp"
#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using namespace std::chrono_literals;
using test::gpus;
using test::Job;
using test::t0;

const ClusterQueueUsage& queue(const std::vector<ClusterQueueUsage>& all, const std::string& n) {
  for (const auto& q : all)
    if (q.name == n) return q;
  throw std::runtime_error("no ClusterQueue " + n);
}

const ClusterQueueUsage::Resource& gpu(const ClusterQueueUsage& q) {
  for (const auto& r : q.resources)
    if (r.resource == "nvidia.com/gpu") return r;
  throw std::runtime_error("no GPU quota");
}

std::string policy() {
  return test::flavor_yaml("gpu") +
         test::cluster_queue_yaml("serving", "all",
                                  {{.flavor = "gpu", .nominal = 4, .lending_limit = 2}}) +
         test::cluster_queue_yaml("batch", "all",
                                  {{.flavor = "gpu", .nominal = 4, .borrowing_limit = 2}}) +
         test::local_queue_yaml("team-a", "main", "serving") +
         test::local_queue_yaml("team-b", "main", "batch");
}

TEST(QueueUsageTest, PendingIsActiveUntilTriedThenInadmissible) {
  Scheduler s(test::load_policy(policy()));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, Job{.name = "big", .gpu = gpus(4), .ns = "team-b"}, t0);
  test::submit(s, Job{.name = "more", .gpu = gpus(4), .pods = 2, .ns = "team-b"}, t0);
  // Not tried yet: both active, 12 GPUs pending on flavor gpu.
  auto q = queue(s.cluster_queue_usage(), "batch");
  EXPECT_EQ(q.pending, 2);
  EXPECT_EQ(q.pending_inadmissible, 0);
  ASSERT_EQ(q.pending_gpu_milli.size(), 1u);
  EXPECT_EQ(q.pending_gpu_milli[0], (std::pair<std::string, int64_t>{"gpu", gpus(12)}));
  s.schedule(t0);
  // "big" is admitted; "more" (8 GPUs) exceeds what batch may ever take (4 + borrow 2).
  q = queue(s.cluster_queue_usage(), "batch");
  EXPECT_EQ(q.admitted, 1);
  EXPECT_EQ(q.pending, 1);
  EXPECT_EQ(q.pending_inadmissible, 1);
  EXPECT_EQ(gpu(q).usage_milli, gpus(4));
  EXPECT_EQ(gpu(q).reservation_milli, gpus(4));
  EXPECT_EQ(gpu(q).borrowing_limit_milli, gpus(2));
  EXPECT_FALSE(gpu(q).lending_limit_milli.has_value());
  EXPECT_EQ(gpu(q).nominal_milli, gpus(4));
  EXPECT_EQ(gpu(queue(s.cluster_queue_usage(), "serving")).lending_limit_milli, gpus(2));
  EXPECT_EQ(q.cohort, "all");
  EXPECT_EQ(s.cluster_queue_of(test::job_key("team-b", "big")), "batch");
  EXPECT_EQ(s.cluster_queue_of("nobody"), "");
}

TEST(QueueUsageTest, ALentReservationStaysInTheReservationNotTheUsage) {
  Scheduler s(test::load_policy(policy()));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, Job{.name = "svc", .gpu = gpus(2), .ns = "team-a"}, t0);
  s.schedule(t0);
  ASSERT_TRUE(s.park(test::job_key("team-a", "svc"), true, t0 + 1min));
  const auto all = s.cluster_queue_usage();  // kept: r refers into it
  const auto& r = gpu(queue(all, "serving"));
  EXPECT_EQ(r.usage_milli, 0);
  EXPECT_EQ(r.reservation_milli, gpus(2));
}

TEST(QueueUsageTest, BorrowingShowsAWeightedShare) {
  Scheduler s(test::load_policy(policy()));
  test::add_nodes(s, "gpu", 1, 8);
  EXPECT_EQ(queue(s.cluster_queue_usage(), "batch").weighted_share, 0);
  test::submit(s, Job{.name = "wide", .gpu = gpus(6), .ns = "team-b"}, t0);
  s.schedule(t0);
  EXPECT_GT(queue(s.cluster_queue_usage(), "batch").weighted_share, 0);
}

}  // namespace
}  // namespace gpuaas::core::admission
