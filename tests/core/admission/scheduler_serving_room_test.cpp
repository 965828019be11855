// Scheduler::serving_room: the replicas of an admitted serving workload its ClusterQueue's quota
// allows now (the serving scale stage's maxReplicas): its reservation plus what the queue may
// still take, borrowing included; with fair sharing only its own unused nominal quota.
#include <gtest/gtest.h>

#include "gpuaas/admission/scheduler.hpp"
#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using namespace std::chrono_literals;
using test::gpus;
using test::job_key;
using test::t0;

// cq-a and cq-b hold 4 GPUs each in one cohort.
std::string pair(bool fair) {
  std::string y = test::flavor_yaml("gpu") +
                  test::cluster_queue_yaml("cq-a", "pool", {{"gpu", 4}}) +
                  test::cluster_queue_yaml("cq-b", "pool", {{"gpu", 4}}) +
                  test::local_queue_yaml("team-a", "main", "cq-a") +
                  test::local_queue_yaml("team-b", "main", "cq-b");
  if (fair) y += test::admission_policy_yaml("  fairSharing:\n    enable: true\n");
  return y;
}

TEST(SchedulerServingRoom, ItsReservationPlusWhatItsQueueMayStillTake) {
  Scheduler s(test::load_policy(pair(false)));
  test::add_nodes(s, "gpu", 2, 8);
  test::submit(s, {.name = "chat", .gpu = gpus(2)});  // one replica of 2 GPUs
  s.schedule(t0);
  auto room = s.serving_room(job_key("team-a", "chat"), "");
  ASSERT_TRUE(room.has_value());
  EXPECT_EQ(room->reserved, 1);
  EXPECT_EQ(room->gpu_milli, gpus(2));
  EXPECT_EQ(room->flavor, "gpu");
  EXPECT_EQ(room->max_replicas, 4);  // 1 + (4 - 2 + 4 lent by cq-b) / 2
  // cq-b takes 3 of its own: 1 left to lend, so cq-a has 2 + 1 = 3 GPUs: one more replica.
  test::submit(s, {.name = "train", .gpu = gpus(3), .ns = "team-b"});
  s.schedule(t0 + 1s);
  room = s.serving_room(job_key("team-a", "chat"), "");
  EXPECT_EQ(room->max_replicas, 2);
  EXPECT_EQ(room->limited_by, "nvidia.com/gpu of flavor gpu in ClusterQueue cq-a");
  // Not admitted (queued, or unknown): no room to give.
  EXPECT_FALSE(s.serving_room(job_key("team-a", "nobody"), "").has_value());
}

TEST(SchedulerServingRoom, FairSharingCountsOnlyItsOwnUnusedQuota) {
  Scheduler s(test::load_policy(pair(true)));
  test::add_nodes(s, "gpu", 2, 8);
  test::submit(s, {.name = "chat", .gpu = gpus(1)});
  s.schedule(t0);
  const auto room = s.serving_room(job_key("team-a", "chat"), "");
  ASSERT_TRUE(room.has_value());
  EXPECT_EQ(room->max_replicas, 4);  // its 4 GPUs, none of cq-b's
}

}  // namespace
}  // namespace gpuaas::core::admission
