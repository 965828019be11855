#include "gpuaas/admission/node_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpuaas::core::admission {
namespace {

constexpr int64_t kGiB = int64_t{1024} * 1024 * 1024 * 1000;  // memory in milli-bytes

class NodeIndexTest : public ::testing::Test {
 protected:
  NameIndex names;
  const int gpu = names.intern("nvidia.com/gpu");
  const int cpu = names.intern("cpu");
  const int mem = names.intern("memory");

  Amounts amounts(int64_t gpu_milli, int64_t cpu_milli, int64_t mem_milli) const {
    Amounts a;
    if (gpu_milli != 0) a.push_back({gpu, gpu_milli});
    if (cpu_milli != 0) a.push_back({cpu, cpu_milli});
    if (mem_milli != 0) a.push_back({mem, mem_milli});
    std::sort(a.begin(), a.end(),
              [](const Amount& x, const Amount& y) { return x.resource < y.resource; });
    return a;
  }
  NodeInfo node(const std::string& name, int gpus, policy::LabelMap labels = {},
                std::vector<policy::Taint> taints = {}, int64_t cores = 64) const {
    NodeInfo n;
    n.name = name;
    n.labels = std::move(labels);
    n.taints = std::move(taints);
    n.allocatable = amounts(gpus * 1000, cores * 1000, 512 * kGiB);
    n.ready = true;
    return n;
  }
  PodGroup pods(int64_t count, int64_t gpu_milli, int64_t cpu_milli = 1000) const {
    PodGroup g;
    g.count = count;
    g.per_pod = amounts(gpu_milli, cpu_milli, 4 * kGiB);
    return g;
  }
  static std::vector<const policy::ResourceFlavor*> ptrs(
      const std::vector<policy::ResourceFlavor>& fs) {
    std::vector<const policy::ResourceFlavor*> out;
    for (const auto& f : fs) out.push_back(&f);
    return out;
  }
  static policy::ResourceFlavor flavor(const std::string& name, policy::LabelMap labels = {},
                                       std::vector<policy::Toleration> tolerations = {}) {
    policy::ResourceFlavor f;
    f.name = name;
    f.node_labels = std::move(labels);
    f.tolerations = std::move(tolerations);
    return f;
  }
  // Nodes with pod counts and device shares, for comparing placements.
  static std::string str(const Placement& p) {
    std::ostringstream o;
    o << "flavor " << p.flavor;
    for (const PodGroupPlacement& g : p.groups) {
      o << " |";
      for (const auto& [n, c] : g.nodes) o << ' ' << n << 'x' << c;
      for (const DeviceShare& d : g.devices)
        o << " [" << d.node << ':' << d.device << '=' << d.milli << ']';
    }
    return o.str();
  }
  static int64_t count_on(const Placement& p, const std::string& node) {
    int64_t c = 0;
    for (const auto& g : p.groups)
      for (const auto& [n, k] : g.nodes)
        if (n == node) c += k;
    return c;
  }
};

TEST_F(NodeIndexTest, FlavorMembershipByLabelsAndTaints) {
  const policy::Taint gpu_taint{"nvidia.com/gpu", "present", "NoSchedule"};
  const policy::Taint team_taint{"dedicated", "team-x", "NoExecute"};
  const policy::Taint soft_taint{"flaky", "", "PreferNoSchedule"};
  std::vector<policy::ResourceFlavor> fs = {
      flavor("a100", {{"gpu", "a100"}}, {{"nvidia.com/gpu", "Exists", "", "NoSchedule"}}),
      flavor("any")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  idx.upsert(node("n1", 8, {{"gpu", "a100"}, {"zone", "a"}}, {gpu_taint}));
  idx.upsert(node("n2", 8, {{"gpu", "h100"}}));
  idx.upsert(node("n3", 0, {}, {}, 32));
  idx.upsert(node("n4", 8, {{"gpu", "a100"}, {"zone", "b"}}, {team_taint}));
  idx.upsert(node("n5", 8, {{"gpu", "a100"}, {"zone", "b"}}, {soft_taint}));

  // Membership is by labels; taints decide per pod group.
  EXPECT_EQ(idx.allocatable(0, gpu), 24000);
  EXPECT_EQ(idx.allocatable(1, gpu), 32000);
  EXPECT_EQ(idx.allocatable(1, cpu), 4 * 64000 + 32000);

  // n4's NoExecute taint is tolerated by neither the flavor nor the group; PreferNoSchedule is
  // soft.
  EXPECT_FALSE(idx.fit(0, {pods(3, 8000)}, 16));
  auto two = idx.fit(0, {pods(2, 8000)}, 16);
  ASSERT_TRUE(two);
  EXPECT_EQ(count_on(*two, "n1"), 1);
  EXPECT_EQ(count_on(*two, "n5"), 1);

  // The group's own toleration joins the flavor's.
  PodGroup tolerant = pods(3, 8000);
  tolerant.tolerations = {{"dedicated", "Equal", "team-x", "NoExecute"}};
  EXPECT_TRUE(idx.fit(0, {tolerant}, 16));
  tolerant.tolerations = {{"dedicated", "Equal", "team-y", ""}};
  EXPECT_FALSE(idx.fit(0, {tolerant}, 16));

  // The group's node selector narrows the flavor's nodes.
  PodGroup zoned = pods(1, 8000);
  zoned.node_selector = {{"zone", "b"}};
  auto z = idx.fit(0, {zoned}, 16);
  ASSERT_TRUE(z);
  EXPECT_EQ(count_on(*z, "n5"), 1);
  zoned.count = 2;
  EXPECT_FALSE(idx.fit(0, {zoned}, 16));

  // "any" tolerates nothing: the tainted n1 and n4 take no pod; pods without GPUs prefer n3.
  EXPECT_FALSE(idx.fit(1, {pods(3, 8000)}, 16));
  auto cpu_only = idx.fit(1, {pods(1, 0)}, 16);
  ASSERT_TRUE(cpu_only);
  EXPECT_EQ(count_on(*cpu_only, "n3"), 1);
}

TEST_F(NodeIndexTest, GangFitsWhollyOrNotAtAll) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  idx.upsert(node("a", 8));
  idx.upsert(node("b", 8));

  auto p = idx.fit(0, {pods(3, 4000)}, 16);
  ASSERT_TRUE(p);
  EXPECT_EQ(str(*p),
            "flavor 0 | ax2 bx1 [0:0=1000] [0:1=1000] [0:2=1000] [0:3=1000] [0:4=1000] "
            "[0:5=1000] [0:6=1000] [0:7=1000] [1:0=1000] [1:1=1000] [1:2=1000] [1:3=1000]");
  EXPECT_FALSE(idx.fit(0, {pods(5, 4000)}, 16));
  EXPECT_EQ(idx.free(0, gpu), 16000);  // fit() reserves nothing

  // Several groups form one gang: all of them or none.
  EXPECT_TRUE(idx.fit(0, {pods(1, 8000), pods(2, 4000)}, 16));
  EXPECT_FALSE(idx.fit(0, {pods(2, 8000), pods(1, 1000)}, 16));
  EXPECT_FALSE(idx.fit(0, {pods(1, 4000), pods(1, 0, 100000)}, 16));  // CPU, not GPUs, lacks

  idx.commit(*p, {pods(3, 4000)}, +1);
  EXPECT_EQ(idx.free(0, gpu), 4000);
  EXPECT_FALSE(idx.fit(0, {pods(2, 4000)}, 16));
  EXPECT_TRUE(idx.fit(0, {pods(1, 4000)}, 16));
  EXPECT_FALSE(idx.fit(0, {pods(1, 4000), pods(1, 500)}, 16));
  EXPECT_FALSE(idx.fit(7, {pods(1, 0)}, 16));  // unknown flavor
}

TEST_F(NodeIndexTest, FractionalPodsShareADevice) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  idx.upsert(node("one", 1));

  auto halves = idx.fit(0, {pods(2, 500)}, 16);
  ASSERT_TRUE(halves);
  EXPECT_EQ(str(*halves), "flavor 0 | onex2 [0:0=1000]");
  EXPECT_FALSE(idx.fit(0, {pods(3, 500)}, 16));
  EXPECT_FALSE(idx.fit(0, {pods(1, 600), pods(1, 500)}, 16));  // one device only

  idx.upsert(node("two", 2));
  auto mixed = idx.fit(0, {pods(1, 600), pods(1, 500)}, 16);
  ASSERT_TRUE(mixed);
  // The 600m pod takes the one-GPU node (fewer whole GPUs left); 500m no longer fits beside it.
  EXPECT_EQ(str(*mixed), "flavor 0 | onex1 [0:0=600] | twox1 [0:0=500]");

  // A pod fills the fullest device it fits on.
  const PodGroup third = pods(1, 300);
  auto t = idx.fit(0, {third}, 16);
  ASSERT_TRUE(t);
  idx.commit(*t, {third}, +1);
  EXPECT_EQ(str(*t), "flavor 0 | onex1 [0:0=300]");
  idx.commit(*idx.fit(0, {pods(1, 300)}, 16), {pods(1, 300)}, +1);  // "one": 400m left
  auto fill = idx.fit(0, {pods(1, 400)}, 16);
  ASSERT_TRUE(fill);
  EXPECT_EQ(str(*fill), "flavor 0 | onex1 [0:0=400]");

  // Halves of two devices are not one GPU.
  NodeIndex split(names);
  split.set_flavors(ptrs(fs));
  split.upsert(node("s", 2));
  split.commit(Placement{0, {{{{"s", 2}}, {{0, 0, 500}, {0, 1, 500}}}}}, {pods(2, 500)}, +1);
  EXPECT_EQ(split.free(0, gpu), 1000);
  EXPECT_FALSE(split.fit(0, {pods(1, 1000)}, 16));
  EXPECT_TRUE(split.fit(0, {pods(2, 500)}, 16));
  EXPECT_EQ(split.fragmentation(0, 1000), 1.0);
}

TEST_F(NodeIndexTest, FragmentationAsDefined) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  EXPECT_EQ(idx.fragmentation(0, 1000), 0.0);  // nothing free
  idx.upsert(node("a", 2));
  idx.upsert(node("b", 1));
  const PodGroup quarter = pods(1, 750);
  idx.commit(*idx.fit(0, {quarter}, 16), {quarter}, +1);  // b: 250m left
  const PodGroup half = pods(1, 500);
  Placement on_a{0, {{{{"a", 1}}, {{0, 0, 500}}}}};
  idx.commit(on_a, {half}, +1);  // a: 500m + one whole GPU
  // Free: 1750m. For 1000m: a fits, its 500m sliver does not; b does not fit at all.
  EXPECT_DOUBLE_EQ(idx.fragmentation(0, 1000), (500.0 + 250.0) / 1750.0);
  EXPECT_DOUBLE_EQ(idx.fragmentation(0, 500), 250.0 / 1750.0);
  EXPECT_DOUBLE_EQ(idx.fragmentation(0, 2000), 1.0);
  EXPECT_DOUBLE_EQ(idx.fragmentation(0, 0), 0.0);
}

// Best fit against worst fit on a hand-built cluster: the same two requests, then the fragmentation
// an 8-GPU request sees.
TEST_F(NodeIndexTest, BestFitFragmentsLessThanWorstFit) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  const std::vector<PodGroup> used_a = {pods(1, 6000)}, used_c = {pods(1, 3000)};
  const std::vector<PodGroup> two = {pods(1, 2000)}, one = {pods(1, 1000)};
  auto build = [&](NodeIndex& idx) {
    idx.set_flavors(ptrs(fs));
    idx.upsert(node("a", 8));
    idx.upsert(node("b", 8));
    idx.upsert(node("c", 4));
    idx.commit(Placement{0, {{{{"a", 1}}, {}}}}, used_a, +1);  // no shares: commit picks
    idx.commit(Placement{0, {{{{"c", 1}}, {}}}}, used_c, +1);
  };
  NodeIndex best(names), worst(names);
  build(best);
  build(worst);
  for (const auto& g : {two, one}) {
    auto p = best.fit(0, g, 16);
    ASSERT_TRUE(p);
    best.commit(*p, g, +1);
    worst.commit(Placement{0, {{{{"b", 1}}, {}}}}, g, +1);  // the emptiest node
  }
  EXPECT_EQ(best.free(0, gpu), worst.free(0, gpu));
  EXPECT_EQ(best.fragmentation(0, 8000), 0.0);
  EXPECT_EQ(worst.fragmentation(0, 8000), 1.0);
  EXPECT_TRUE(best.fit(0, {pods(1, 8000)}, 16));
  EXPECT_FALSE(worst.fit(0, {pods(1, 8000)}, 16));

  // Fractional: best fit shares the device that is already in use.
  NodeIndex frac(names);
  frac.set_flavors(ptrs(fs));
  frac.upsert(node("x", 2));
  frac.upsert(node("y", 2));
  const std::vector<PodGroup> half = {pods(1, 500)};
  frac.commit(*frac.fit(0, half, 16), half, +1);
  auto second = frac.fit(0, half, 16);
  ASSERT_TRUE(second);
  EXPECT_EQ(str(*second), "flavor 0 | xx1 [0:0=500]");
  frac.commit(*second, half, +1);
  EXPECT_EQ(frac.fragmentation(0, 1000), 0.0);
}

TEST_F(NodeIndexTest, CommitReleaseRoundTripRestoresExactly) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  for (int i = 0; i < 6; ++i) idx.upsert(node("n" + std::to_string(i), i % 3 == 0 ? 8 : 4));
  NodeInfo busy = node("busy", 4);
  busy.used_by_others = amounts(1500, 2000, kGiB);
  idx.upsert(busy);

  const std::vector<PodGroup> probe = {pods(2, 300), pods(1, 2000)};
  const std::string before = str(*idx.fit(0, probe, 16));
  const double frag_before = idx.fragmentation(0, 1000);
  const int64_t free_gpu = idx.free(0, gpu), free_cpu = idx.free(0, cpu);

  const std::vector<std::vector<PodGroup>> gangs = {
      {pods(3, 250)},     {pods(1, 4000), pods(2, 700)},
      {pods(2, 0, 8000)}, {pods(1, 1500)},
      {pods(4, 1000)},    {pods(5, 100)},
      {pods(1, 8000)}};
  std::vector<Placement> placed;
  for (const auto& g : gangs) {
    auto p = idx.fit(0, g, 16);
    ASSERT_TRUE(p) << placed.size();
    idx.commit(*p, g, +1);
    placed.push_back(*p);
  }
  EXPECT_LT(idx.free(0, gpu), free_gpu);

  // Release one and admit it again.
  const int64_t free_mid = idx.free(0, gpu);
  idx.commit(placed[1], gangs[1], -1);
  EXPECT_EQ(idx.free(0, gpu), free_mid + 4000 + 2 * 700);
  idx.commit(placed[1], gangs[1], +1);
  EXPECT_EQ(idx.free(0, gpu), free_mid);

  for (std::size_t i : {3u, 0u, 5u, 1u, 6u, 2u, 4u}) idx.commit(placed[i], gangs[i], -1);
  EXPECT_EQ(idx.free(0, gpu), free_gpu);
  EXPECT_EQ(idx.free(0, cpu), free_cpu);
  EXPECT_EQ(idx.fragmentation(0, 1000), frag_before);
  EXPECT_EQ(str(*idx.fit(0, probe, 16)), before);
}

TEST_F(NodeIndexTest, ScoresABoundedNumberOfCandidates) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  for (int i = 0; i < 1000; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "node-%04d", i);
    NodeInfo n = node(name, 8);
    // Equal slivers everywhere: many nodes tie on the device score.
    n.used_by_others = amounts((i % 4) * 1000 + 500, 1000, kGiB);
    idx.upsert(n);
  }
  uint64_t pods_asked = 0;
  for (int round = 0; round < 200; ++round) {
    const std::vector<PodGroup> g = {pods(1 + round % 3, (round % 5) * 300),
                                     pods(round % 2, 1000 * (1 + round % 4))};
    for (const auto& pg : g) pods_asked += static_cast<uint64_t>(pg.count);
    auto p = idx.fit(0, g, 4);
    ASSERT_TRUE(p);
    idx.commit(*p, g, +1);
  }
  EXPECT_EQ(idx.stats().attempts, 200u);
  EXPECT_GT(idx.stats().candidates_scored, 0u);
  EXPECT_LE(idx.stats().candidates_scored, 4 * pods_asked);
  EXPECT_EQ(idx.node_count(), 1000u);
  EXPECT_GT(idx.bytes(), 1000u * 200u);

  // One candidate per pod still places.
  const uint64_t scored = idx.stats().candidates_scored;
  EXPECT_TRUE(idx.fit(0, {pods(10, 250)}, 1));
  EXPECT_LE(idx.stats().candidates_scored - scored, 10u);
}

// Best-fit order puts nodes with little CPU first; a pod that would leave their other GPU stranded
// (no CPU for another like it) looks past them, for a bounded number of extra nodes.
TEST_F(NodeIndexTest, StrandingNodesDoNotUseUpTheCandidateBudget) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  for (int i = 0; i < 4; ++i) idx.upsert(node("a" + std::to_string(i), 2, {}, {}, 4));
  idx.upsert(node("z", 2, {}, {}, 16));
  const std::vector<PodGroup> g = {pods(1, 1000, 3000)};  // 1000m CPU left after it on an "a"
  auto p = idx.fit(0, g, 2);
  ASSERT_TRUE(p);
  EXPECT_EQ(count_on(*p, "z"), 1);
  EXPECT_EQ(idx.stats().stranding_scored, 4u);
  EXPECT_EQ(idx.stats().candidates_scored, 1u);

  // The extra looks are bounded: 8 times the budget in all, then the least bad of them.
  NodeIndex many(names);
  many.set_flavors(ptrs(fs));
  for (int i = 0; i < 10; ++i) many.upsert(node("a" + std::to_string(i), 2, {}, {}, 4));
  many.upsert(node("z", 2, {}, {}, 16));
  auto q = many.fit(0, g, 1);
  ASSERT_TRUE(q);
  EXPECT_EQ(count_on(*q, "z"), 0);
  EXPECT_LE(many.stats().stranding_scored + many.stats().candidates_scored, 8u);
}

// Nodes whose GPUs are taken often have no CPU left either: pods without GPUs skip them and still
// find the one node that fits, or learn that none does.
TEST_F(NodeIndexTest, PodsWithoutGpusSkipNodesWithoutCpu) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  const std::vector<PodGroup> fill = {pods(1, 1000, 32000)};
  for (int i = 0; i < 300; ++i) {
    const std::string name = "full-" + std::to_string(i);
    idx.upsert(node(name, 1, {}, {}, 32));
    idx.commit(Placement{0, {{{{name, 1}}, {}}}}, fill, +1);
  }
  idx.upsert(node("cpu-only", 0, {}, {}, 4));
  idx.upsert(node("gpus", 8));
  auto small = idx.fit(0, {pods(1, 0, 2000)}, 16);
  ASSERT_TRUE(small);
  EXPECT_EQ(count_on(*small, "cpu-only"), 1);
  auto big = idx.fit(0, {pods(1, 0, 6000)}, 16);
  ASSERT_TRUE(big);
  EXPECT_EQ(count_on(*big, "gpus"), 1);
  EXPECT_FALSE(idx.fit(0, {pods(1, 0, 65000)}, 16));
  EXPECT_TRUE(idx.could_ever_fit(0, {pods(1, 0, 32000)}));
}

TEST_F(NodeIndexTest, NodesNotReadyOrCordonedTakeNoPods) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  NodeInfo down = node("down", 8);
  down.ready = false;
  NodeInfo cordoned = node("cordoned", 8);
  cordoned.schedulable = false;
  idx.upsert(down);
  idx.upsert(cordoned);
  idx.upsert(node("small", 2));
  EXPECT_EQ(idx.allocatable(0, gpu), 2000);
  EXPECT_EQ(idx.node_count(), 3u);
  EXPECT_FALSE(idx.fit(0, {pods(1, 4000)}, 16));
  EXPECT_TRUE(idx.could_ever_fit(0, {pods(1, 4000)}));  // they may come back

  down.ready = true;
  idx.upsert(down);
  auto p = idx.fit(0, {pods(1, 4000)}, 16);
  ASSERT_TRUE(p);
  EXPECT_EQ(count_on(*p, "down"), 1);
  EXPECT_EQ(idx.allocatable(0, gpu), 10000);
}

TEST_F(NodeIndexTest, CouldEverFitTellsNeverFromNotNow) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default"), flavor("none", {{"x", "y"}})};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  NodeInfo shared = node("shared", 8);
  shared.used_by_others = amounts(6000, 0, 0);  // a daemon set's GPUs count even when empty
  idx.upsert(shared);
  idx.upsert(node("full", 4));
  const std::vector<PodGroup> four = {pods(1, 4000)};
  auto p = idx.fit(0, four, 16);
  ASSERT_TRUE(p);
  idx.commit(*p, four, +1);
  EXPECT_FALSE(idx.fit(0, four, 16));
  EXPECT_TRUE(idx.could_ever_fit(0, four));
  EXPECT_FALSE(idx.could_ever_fit(0, {pods(2, 4000)}));
  EXPECT_FALSE(idx.could_ever_fit(0, {pods(1, 5000)}));
  EXPECT_TRUE(idx.could_ever_fit(0, {pods(1, 4000), pods(4, 500)}));
  EXPECT_FALSE(idx.could_ever_fit(0, {pods(1, 4000), pods(5, 500)}));
  EXPECT_FALSE(idx.could_ever_fit(1, {pods(1, 0)}));
  EXPECT_EQ(idx.stats().attempts, 2u);  // could_ever_fit() is not counted
}

TEST_F(NodeIndexTest, UpdatesKeepWhatIsCommitted) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  idx.upsert(node("n", 8));
  const std::vector<PodGroup> g = {pods(1, 6000)};
  auto p = idx.fit(0, g, 16);
  ASSERT_TRUE(p);
  idx.commit(*p, g, +1);
  idx.upsert(node("n", 8, {{"new", "label"}}));
  EXPECT_EQ(idx.free(0, gpu), 2000);
  EXPECT_FALSE(idx.fit(0, {pods(1, 3000)}, 16));

  idx.upsert(node("n", 4));  // allocatable below what is committed: nothing free, no crash
  EXPECT_EQ(idx.free(0, gpu), 0);
  EXPECT_FALSE(idx.fit(0, {pods(1, 100)}, 16));
  idx.commit(*p, g, -1);
  EXPECT_EQ(idx.free(0, gpu), 4000);
  EXPECT_TRUE(idx.fit(0, {pods(1, 4000)}, 16));

  idx.commit(*p, g, +1);
  idx.remove("n");  // with pods committed: dropped
  EXPECT_EQ(idx.node_count(), 0u);
  EXPECT_EQ(idx.allocatable(0, gpu), 0);
  idx.commit(*p, g, -1);  // releasing onto a gone node is harmless
  idx.upsert(node("n", 8));
  EXPECT_EQ(idx.free(0, gpu), 8000);
}

TEST_F(NodeIndexTest, SetFlavorsAgainRecomputesMembership) {
  std::vector<policy::ResourceFlavor> fs = {flavor("a", {{"pool", "a"}})};
  NodeIndex idx(names);
  idx.set_flavors(ptrs(fs));
  idx.upsert(node("x", 8, {{"pool", "a"}}));
  idx.upsert(node("y", 4, {{"pool", "b"}}));
  const std::vector<PodGroup> g = {pods(1, 2000)};
  idx.commit(*idx.fit(0, g, 16), g, +1);
  EXPECT_EQ(idx.allocatable(0, gpu), 8000);

  std::vector<policy::ResourceFlavor> reloaded = {flavor("b", {{"pool", "b"}}), flavor("all")};
  idx.set_flavors(ptrs(reloaded));
  EXPECT_EQ(idx.allocatable(0, gpu), 4000);
  EXPECT_EQ(idx.allocatable(1, gpu), 12000);
  EXPECT_EQ(idx.free(1, gpu), 10000);  // the commit stays with its node
  EXPECT_FALSE(idx.fit(0, {pods(1, 8000)}, 16));
  EXPECT_TRUE(idx.fit(1, {pods(1, 4000), pods(1, 6000)}, 16));
}

TEST_F(NodeIndexTest, DeterministicWhateverTheOrderNodesArrive) {
  std::vector<policy::ResourceFlavor> fs = {flavor("default")};
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 40; ++i) nodes.push_back(node("n" + std::to_string(i), 1 + i % 8));
  NodeIndex fwd(names), rev(names);
  fwd.set_flavors(ptrs(fs));
  for (const auto& n : nodes) fwd.upsert(n);
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) rev.upsert(*it);
  rev.upsert(node("n7", 3));  // updated, removed and back: same final state
  rev.remove("n7");
  rev.upsert(nodes[7]);
  rev.set_flavors(ptrs(fs));
  for (int round = 0; round < 60; ++round) {
    const std::vector<PodGroup> g = {pods(1 + round % 4, (round * 170) % 1300)};
    auto a = fwd.fit(0, g, 8), b = rev.fit(0, g, 8);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a) continue;
    EXPECT_EQ(str(*a), str(*b));
    fwd.commit(*a, g, +1);
    rev.commit(*b, g, +1);
  }
  EXPECT_EQ(fwd.fragmentation(0, 1000), rev.fragmentation(0, 1000));
}

// --- Alibaba GPU trace 2023 (openb), the FGD paper's data ---

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(std::move(cells));
  }
  return rows;
}

// First fit, the baseline: nodes in the trace's order, the first devices that fit.
struct FirstFit {
  struct Node {
    std::string name;
    int64_t cpu = 0, mem = 0;
    std::vector<int64_t> dev;
  };
  std::vector<Node> nodes;
  // The placement of one pod, with its devices, or nullopt.
  std::optional<Placement> place(int64_t cpu, int64_t mem, int64_t gpu) {
    for (Node& n : nodes) {
      if (n.cpu < cpu || n.mem < mem) continue;
      std::vector<DeviceShare> shares;
      if (gpu > 0 && gpu < 1000) {
        auto it = std::find_if(n.dev.begin(), n.dev.end(), [&](int64_t f) { return f >= gpu; });
        if (it == n.dev.end()) continue;
        shares.push_back({0, static_cast<int32_t>(it - n.dev.begin()), gpu});
      } else {
        for (std::size_t d = 0; d < n.dev.size() && gpu > 0; ++d)
          if (n.dev[d] == 1000 && static_cast<int64_t>(shares.size()) * 1000 < gpu)
            shares.push_back({0, static_cast<int32_t>(d), 1000});
        if (static_cast<int64_t>(shares.size()) * 1000 < gpu) continue;
      }
      n.cpu -= cpu;
      n.mem -= mem;
      for (const DeviceShare& s : shares) n.dev[static_cast<std::size_t>(s.device)] -= s.milli;
      return Placement{0, {{{{n.name, 1}}, std::move(shares)}}};
    }
    return std::nullopt;
  }
};

TEST_F(NodeIndexTest, AlibabaTraceBestFitFragmentsNoMoreThanFirstFit) {
  const std::string dir = std::string(GPUAAS_SHARED_DIR) + "/traces/";
  const auto node_rows = read_csv(dir + "openb_node_list_gpu_node.csv");
  const auto pod_rows = read_csv(dir + "openb_pod_list_default.csv");
  if (node_rows.empty() || pod_rows.empty()) GTEST_SKIP() << "no trace in " << dir;
  ASSERT_EQ(node_rows.size(), 1213u);
  const auto start = std::chrono::steady_clock::now();

  constexpr int64_t kMiB = int64_t{1024} * 1024 * 1000;
  std::vector<policy::ResourceFlavor> fs = {flavor("openb")};
  NodeIndex best(names), first(names);
  best.set_flavors(ptrs(fs));
  first.set_flavors(ptrs(fs));
  FirstFit baseline;
  for (const auto& r : node_rows) {  // sn,cpu_milli,memory_mib,gpu,model
    NodeInfo n;
    n.name = r[0];
    n.labels = {{"model", r[4]}};
    const int64_t gpus = std::stoll(r[3]);
    n.allocatable = amounts(gpus * 1000, std::stoll(r[1]), std::stoll(r[2]) * kMiB);
    n.ready = true;
    best.upsert(n);
    first.upsert(n);
    baseline.nodes.push_back({n.name, std::stoll(r[1]), std::stoll(r[2]) * kMiB,
                              std::vector<int64_t>(static_cast<std::size_t>(gpus), 1000)});
  }
  ASSERT_EQ(best.allocatable(0, gpu), 6212000);

  // The pods in creation order, no departures: the first 6,000 (about 72% of the GPUs asked),
  // then the rest of the trace (98% asked) for the share of GPUs each allocates.
  // name,cpu_milli,memory_mib,num_gpu,gpu_milli,...
  constexpr std::size_t kSlice = 6000;
  std::map<int64_t, int64_t> sizes;  // GPU milli per pod -> pods: the slice's task sizes
  int placed_best = 0, placed_first = 0;
  uint64_t pods_asked = 0;
  auto place = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < std::min(to, pod_rows.size()); ++i) {
      const auto& r = pod_rows[i];
      const int64_t num_gpu = std::stoll(r[3]), gpu_milli = std::stoll(r[4]);
      const int64_t g = num_gpu == 1 ? gpu_milli : num_gpu * 1000;
      const int64_t c = std::stoll(r[1]), m = std::stoll(r[2]) * kMiB;
      if (i < kSlice) ++sizes[g];
      std::vector<PodGroup> gang(1);
      gang[0].count = 1;
      gang[0].per_pod = amounts(g, c, m);
      ++pods_asked;
      if (auto p = best.fit(0, gang, 16)) {
        best.commit(*p, gang, +1);
        ++placed_best;
      }
      if (auto p = baseline.place(c, m, g)) {
        first.commit(*p, gang, +1);
        ++placed_first;
      }
    }
  };
  place(0, kSlice);
  // FGD's cluster measure: fragmentation expected over the slice's task sizes (GPU pods only).
  auto expected = [&](const NodeIndex& idx) {
    double sum = 0.0, weight = 0.0;
    for (const auto& [g, n] : sizes) {
      if (g == 0) continue;
      sum += static_cast<double>(n) * idx.fragmentation(0, g);
      weight += static_cast<double>(n);
    }
    return sum / weight;
  };
  const double best_whole = best.fragmentation(0, 1000), first_whole = first.fragmentation(0, 1000);
  const double best_exp = expected(best), first_exp = expected(first);
  std::cout << "openb, first " << kSlice << " pods: free GPU share stuck for a 1-GPU pod: best fit "
            << best_whole << ", first fit " << first_whole
            << "; expected over the slice's task sizes: best fit " << best_exp << ", first fit "
            << first_exp << "\n";
  EXPECT_EQ(placed_best, static_cast<int>(kSlice));
  EXPECT_EQ(placed_first, static_cast<int>(kSlice));
  EXPECT_LE(best_whole, first_whole);
  EXPECT_LE(best_exp, first_exp);

  place(kSlice, pod_rows.size());
  auto allocated = [&](const NodeIndex& idx) {
    return 1.0 -
           static_cast<double>(idx.free(0, gpu)) / static_cast<double>(idx.allocatable(0, gpu));
  };
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "openb, all " << pod_rows.size() << " pods: GPUs allocated: best fit "
            << allocated(best) << " (" << placed_best << " pods), first fit " << allocated(first)
            << " (" << placed_first << " pods); candidates scored per pod "
            << static_cast<double>(best.stats().candidates_scored) / static_cast<double>(pods_asked)
            << "; " << ms << " ms\n";
  RecordProperty("best_fit_fragmentation_1gpu", std::to_string(best_whole));
  RecordProperty("first_fit_fragmentation_1gpu", std::to_string(first_whole));
  RecordProperty("best_fit_fragmentation_expected", std::to_string(best_exp));
  RecordProperty("first_fit_fragmentation_expected", std::to_string(first_exp));
  RecordProperty("best_fit_gpus_allocated", std::to_string(allocated(best)));
  RecordProperty("first_fit_gpus_allocated", std::to_string(allocated(first)));
  EXPECT_GE(allocated(best), allocated(first));
  EXPECT_LE(best.stats().candidates_scored, 16 * pods_asked);
}

}  // namespace
}  // namespace gpuaas::core::admission
