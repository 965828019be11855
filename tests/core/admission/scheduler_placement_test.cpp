// Placement: quota alone does not admit a gang that cannot run on Ready nodes; fractional GPUs
// share a device; partial admission takes fewer pods when all do not fit.
#include <gtest/gtest.h>

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
using Nodes = std::vector<std::pair<std::string, int64_t>>;

std::string queue_of(int64_t nominal) {
  return test::flavor_yaml("gpu") + test::cluster_queue_yaml("cq", "", {{"gpu", nominal}}) +
         test::local_queue_yaml("team-a", "main", "cq");
}

TEST(PlacementTest, GangWaitsForNodesThenIsAdmittedWhenANodeIsAdded) {
  Scheduler s(test::load_policy(queue_of(8)));
  s.upsert_node(test::node(s, "gpu-0", "gpu", 2), t0);
  test::submit(s, {.name = "gang", .gpu = gpus(2), .pods = 2});
  EXPECT_TRUE(s.schedule(t0).empty());
  const auto x = s.explain(job_key("team-a", "gang"), t0);
  EXPECT_EQ(x.reason, reason::kWaitingForNodes) << x.message;
  EXPECT_EQ(x.holder, "placement");

  s.upsert_node(test::node(s, "gpu-1", "gpu", 2), t0 + 1min);
  const auto ds = s.schedule(t0 + 1min);
  ASSERT_EQ(test::admitted(ds), keys_of({"gang"}));
  EXPECT_EQ(test::placed(ds[0]), (Nodes{{"gpu-0", 1}, {"gpu-1", 1}}));
  EXPECT_EQ(ds[0].placement.flavor, 0);
}

TEST(PlacementTest, NodesThatAreNotReadyDoNotCount) {
  Scheduler s(test::load_policy(queue_of(8)));
  s.upsert_node(test::node(s, "gpu-0", "gpu", 8, /*ready=*/false), t0);
  test::submit(s, {.name = "a", .gpu = gpus(4)});
  EXPECT_TRUE(s.schedule(t0).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "a"), t0).reason, reason::kWaitingForNodes);
  s.upsert_node(test::node(s, "gpu-0", "gpu", 8), t0 + 1min);
  const auto ds = s.schedule(t0 + 1min);
  ASSERT_EQ(test::admitted(ds), keys_of({"a"}));
  EXPECT_EQ(test::placed(ds[0]), (Nodes{{"gpu-0", 1}}));
}

TEST(PlacementTest, AdmittedPodsTakeNodeCapacity) {
  Scheduler s(test::load_policy(queue_of(16)));
  test::add_nodes(s, "gpu", 1, 8);
  test::submit(s, {.name = "a", .gpu = gpus(6)});
  test::submit(s, {.name = "b", .gpu = gpus(4), .created = t0 + 1s});
  test::submit(s, {.name = "c", .gpu = gpus(2), .created = t0 + 2s});
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"a", "c"}));
  EXPECT_EQ(s.explain(job_key("team-a", "b"), t0 + 2s).reason, reason::kWaitingForNodes);
  // The node goes away: nothing admitted is evicted by the engine, nothing new fits.
  s.remove_node("gpu-0", t0 + 3s);
  EXPECT_TRUE(s.schedule(t0 + 3s).empty());
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

TEST(PlacementTest, FractionalGpuPodsShareADevice) {
  Scheduler s(test::load_policy(queue_of(4)));
  s.upsert_node(test::node(s, "gpu-0", "gpu", 1), t0);
  test::submit(s, {.name = "half-1", .gpu = 500});
  test::submit(s, {.name = "half-2", .gpu = 500, .created = t0 + 1s});
  test::submit(s, {.name = "half-3", .gpu = 500, .created = t0 + 2s});
  const auto ds = s.schedule(t0 + 2s);
  ASSERT_EQ(test::admitted(ds), keys_of({"half-1", "half-2"}));
  for (const auto& d : ds) {
    EXPECT_EQ(test::placed(d), (Nodes{{"gpu-0", 1}}));
    ASSERT_EQ(d.placement.groups.size(), 1u);
    const auto& devices = d.placement.groups[0].devices;
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0].device, 0);
    EXPECT_EQ(devices[0].milli, 500);
  }
  // Quota has room for more; the one device does not.
  const auto x = s.explain(job_key("team-a", "half-3"), t0 + 2s);
  EXPECT_EQ(x.reason, reason::kWaitingForNodes);
  test::finish(s, {.name = "half-1", .gpu = 500}, t0 + 3s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3s)), keys_of({"half-3"}));
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

int64_t pods(const Decision& d) {
  int64_t n = 0;
  for (const auto& [node, count] : test::placed(d)) n += count;
  return n;
}

TEST(PlacementTest, PartialAdmissionTakesFewerPodsWhenQuotaIsShort) {
  Scheduler s(test::load_policy(queue_of(4)));
  test::add_nodes(s, "gpu", 2, 8);
  test::submit(s, {.name = "elastic", .gpu = gpus(2), .pods = 4, .min_pods = 1});
  const auto ds = s.schedule(t0);
  ASSERT_EQ(test::admitted(ds), keys_of({"elastic"}));
  EXPECT_EQ(ds[0].counts, std::vector<int64_t>{2});
  EXPECT_EQ(pods(ds[0]), 2);
}

TEST(PlacementTest, PartialAdmissionTakesFewerPodsWhenNodesAreShort) {
  Scheduler s(test::load_policy(queue_of(16)));
  s.upsert_node(test::node(s, "gpu-0", "gpu", 6), t0);
  test::submit(s, {.name = "elastic", .gpu = gpus(2), .pods = 4, .min_pods = 2});
  test::submit(s, {.name = "rigid", .gpu = gpus(2), .pods = 4, .created = t0 + 1s});
  const auto ds = s.schedule(t0 + 1s);
  ASSERT_EQ(test::admitted(ds), keys_of({"elastic"}));
  EXPECT_EQ(ds[0].counts, std::vector<int64_t>{3});
  EXPECT_EQ(test::placed(ds[0]), (Nodes{{"gpu-0", 3}}));
  EXPECT_EQ(s.explain(job_key("team-a", "rigid"), t0 + 1s).reason, reason::kWaitingForNodes);
}

TEST(PlacementTest, PartialAdmissionNeverGoesBelowMinCount) {
  Scheduler s(test::load_policy(queue_of(16)));
  s.upsert_node(test::node(s, "gpu-0", "gpu", 2), t0);
  test::submit(s, {.name = "elastic", .gpu = gpus(2), .pods = 4, .min_pods = 2});
  EXPECT_TRUE(s.schedule(t0).empty());
  EXPECT_EQ(s.explain(job_key("team-a", "elastic"), t0).reason, reason::kWaitingForNodes);
}

// requireNodeFit: false is Kueue's behaviour: quota alone admits, pods wait for nodes.
TEST(PlacementTest, QuotaOnlyAdmitsWithoutNodesAndWritesNoPlacement) {
  const std::string policy = queue_of(8) +
                             "---\napiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\n"
                             "metadata: {name: kueue-like}\n"
                             "spec: {placement: {requireNodeFit: false}}\n";
  Scheduler s(test::load_policy(policy));
  s.upsert_node(test::node(s, "gpu-0", "gpu", 2), t0);
  test::submit(s, {.name = "gang", .gpu = gpus(2), .pods = 2});
  test::submit(s, {.name = "big", .gpu = gpus(4), .created = t0 + 1s});
  test::submit(s, {.name = "over", .gpu = gpus(4), .created = t0 + 2s});
  const auto ds = s.schedule(t0 + 2s);
  EXPECT_EQ(test::admitted(ds), keys_of({"gang", "big"}));  // 8 GPUs of quota, 2 on nodes
  for (const auto& d : ds) EXPECT_TRUE(d.placement.groups.empty());
  EXPECT_EQ(s.explain(job_key("team-a", "over"), t0 + 2s).reason, reason::kWaitingForQuota);
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

// A pod that runs elsewhere than placed: the placement follows it, freeing the planned node.
TEST(PlacementTest, APodMovedElsewhereMovesItsPlacement) {
  Scheduler s(test::load_policy(queue_of(16)));
  test::add_nodes(s, "gpu", 2, 8);
  test::submit(s, {.name = "a", .gpu = gpus(8)});
  const auto ds = s.schedule(t0);
  ASSERT_EQ(test::admitted(ds), keys_of({"a"}));
  const std::string planned = test::placed(ds[0])[0].first;
  const std::string other = planned == "gpu-0" ? "gpu-1" : "gpu-0";
  EXPECT_FALSE(s.move_pod(job_key("team-a", "a"), 0, other, planned, t0)) << "no pod there";
  EXPECT_FALSE(s.move_pod(job_key("team-a", "nobody"), 0, planned, other, t0));
  ASSERT_TRUE(s.move_pod(job_key("team-a", "a"), 0, planned, other, t0 + 1s));
  test::submit(s, {.name = "b", .gpu = gpus(8), .created = t0 + 1s});
  const auto next = s.schedule(t0 + 2s);
  ASSERT_EQ(test::admitted(next), keys_of({"b"}));
  EXPECT_EQ(test::placed(next[0]), (Nodes{{planned, 1}}));
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
  // Released from where it really was: both nodes free again once both end.
  s.remove_workload(job_key("team-a", "a"), t0 + 3s);
  s.remove_workload(job_key("team-a", "b"), t0 + 3s);
  test::submit(s, {.name = "c", .gpu = gpus(8), .pods = 2, .created = t0 + 3s});
  EXPECT_EQ(test::admitted(s.schedule(t0 + 4s)), keys_of({"c"}));
}

}  // namespace
}  // namespace gpuaas::core::admission
