// Quota as Kueue documents it (concepts/cluster_queue.md and cohort.md), in GPUs: nominal quota,
// borrowing within a cohort up to borrowingLimit, lendingLimit keeping quota for its owner,
// hierarchical cohorts with their own quota, flavors in order and flavorFungibility.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using namespace std::chrono_literals;
using test::GpuQuota;
using test::gpus;
using test::Job;
using test::job_key;
using test::keys_of;
using test::t0;

std::string team_queues() {
  return test::local_queue_yaml("team-a", "main", "team-a-cq") +
         test::local_queue_yaml("team-b", "main", "team-b-cq");
}

// Kueue's two-team cohort (9 and 12), with the limits its examples set.
std::string team_ab(GpuQuota a, GpuQuota b) {
  return test::flavor_yaml("default-flavor") +
         test::cluster_queue_yaml("team-a-cq", "team-ab", {a}) +
         test::cluster_queue_yaml("team-b-cq", "team-ab", {b}) + team_queues();
}

void expect_invariants(const Scheduler& s) {
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

TEST(QuotaTest, NominalQuotaIsTheLimitWithoutACohort) {
  Scheduler s(test::load_policy(test::flavor_yaml("gpu") +
                                test::cluster_queue_yaml("cq", "", {{"gpu", 4}}) +
                                test::local_queue_yaml("team-a", "main", "cq")));
  test::add_nodes(s, "gpu", 2, 8);
  test::submit(s, {.name = "a", .gpu = gpus(3)});
  test::submit(s, {.name = "b", .gpu = gpus(3), .created = t0 + 1s});
  const auto ds = s.schedule(t0 + 1s);
  ASSERT_EQ(test::admitted(ds), keys_of({"a"}));
  EXPECT_FALSE(ds[0].borrowing);
  const auto x = s.explain(job_key("team-a", "b"), t0 + 1s);
  EXPECT_EQ(x.reason, reason::kWaitingForQuota);
  EXPECT_EQ(x.holder, "quota");
  EXPECT_NE(x.message.find("nvidia.com/gpu"), std::string::npos) << x.message;
}

// "If team-b-cq has no admitted Workloads, then team-a-cq can admit Workloads with resources
// adding up to 12+9=21".
TEST(QuotaTest, BorrowsTheCohortsUnusedQuota) {
  Scheduler s(test::load_policy(team_ab({"default-flavor", 9}, {"default-flavor", 12})));
  test::add_nodes(s, "default-flavor", 3, 8);
  test::submit(s, {.name = "big", .pods = 21});
  test::submit(s, {.name = "one-more", .created = t0 + 1s});
  const auto ds = s.schedule(t0 + 1s);
  ASSERT_EQ(test::admitted(ds), keys_of({"big"}));
  EXPECT_TRUE(ds[0].borrowing);
  EXPECT_EQ(s.explain(job_key("team-a", "one-more"), t0 + 1s).reason, reason::kWaitingForQuota);
  expect_invariants(s);
}

// Kueue's note: within a cohort, workloads that fit under nominalQuota are scheduled before
// those that need to borrow; team-b gets its nominal quota before team-a borrows more.
TEST(QuotaTest, WorkloadWithinNominalQuotaGoesBeforeOneThatBorrows) {
  Scheduler s(test::load_policy(team_ab({"default-flavor", 9}, {"default-flavor", 12})));
  test::add_nodes(s, "default-flavor", 3, 8);
  test::submit(s, {.name = "nominal", .pods = 9});
  ASSERT_EQ(test::admitted(s.schedule(t0)), keys_of({"nominal"}));
  test::submit(s, {.name = "borrow", .pods = 3, .created = t0 + 1s}, t0 + 2s);
  test::submit(s, {.name = "own", .pods = 12, .created = t0 + 2s, .ns = "team-b"}, t0 + 2s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"own"}, "team-b"));
  EXPECT_EQ(s.explain(job_key("team-a", "borrow"), t0 + 2s).reason, reason::kWaitingForQuota);
}

// borrowingLimit 1: "team-a-cq can admit Workloads with resources adding up to 9+1=10".
TEST(QuotaTest, BorrowingStopsAtTheBorrowingLimit) {
  Scheduler s(test::load_policy(team_ab({"default-flavor", 9, 1}, {"default-flavor", 12})));
  test::add_nodes(s, "default-flavor", 3, 8);
  test::submit(s, {.name = "ten", .pods = 10});
  test::submit(s, {.name = "eleventh", .created = t0 + 1s});
  test::submit(s, {.name = "too-big", .pods = 11, .created = t0 + 2s});
  const auto ds = s.schedule(t0 + 2s);
  ASSERT_EQ(test::admitted(ds), keys_of({"ten"}));
  EXPECT_TRUE(ds[0].borrowing);
  EXPECT_EQ(s.explain(job_key("team-a", "eleventh"), t0 + 2s).reason, reason::kWaitingForQuota);
  const auto x = s.explain(job_key("team-a", "too-big"), t0 + 2s);
  EXPECT_EQ(x.reason, reason::kExceedsMaxQuota) << x.message;
  // Without a borrowingLimit team-b may take all 21 (once team-a's borrowed one is back).
  s.remove_workload(job_key("team-a", "ten"), t0 + 3s);
  s.remove_workload(job_key("team-a", "eleventh"), t0 + 3s);
  s.remove_workload(job_key("team-a", "too-big"), t0 + 3s);
  test::submit(s, {.name = "all", .pods = 21, .ns = "team-b"}, t0 + 3s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3s)), keys_of({"all"}, "team-b"));
  expect_invariants(s);
}

// lendingLimit 1 on team-b: team-a reaches 9+1=10 and team-b keeps 11 for itself.
TEST(QuotaTest, LendingLimitKeepsQuotaForItsOwner) {
  Scheduler s(test::load_policy(team_ab({"default-flavor", 9}, {"default-flavor", 12, {}, 1})));
  test::add_nodes(s, "default-flavor", 3, 8);
  test::submit(s, {.name = "ten", .pods = 10});
  test::submit(s, {.name = "eleventh", .created = t0 + 1s});
  ASSERT_EQ(test::admitted(s.schedule(t0 + 1s)), keys_of({"ten"}));
  EXPECT_EQ(s.explain(job_key("team-a", "eleventh"), t0 + 1s).reason, reason::kWaitingForQuota);
  test::submit(s, {.name = "own", .pods = 11, .ns = "team-b"}, t0 + 2s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"own"}, "team-b"));
  // The twelfth is lent to team-a: team-b waits for it (nothing preempts here).
  test::submit(s, {.name = "twelfth", .created = t0 + 3s, .ns = "team-b"}, t0 + 3s);
  EXPECT_TRUE(s.schedule(t0 + 3s).empty());
  EXPECT_EQ(s.explain(job_key("team-b", "twelfth"), t0 + 3s).reason, reason::kWaitingForQuota);
  expect_invariants(s);
}

// Kueue's hierarchical cohorts: a Cohort's own nominalQuota is a pool on top of its
// ClusterQueues' and is lent to its parent up to its lendingLimit.
//   root (4 GPUs) <- org (2 GPUs, lends at most 1) <- cq-x (0)
//   root <- cq-y (0)
TEST(QuotaTest, HierarchicalCohortsShareTheirOwnQuota) {
  const std::string yaml = test::flavor_yaml("gpu") + test::cohort_yaml("root", "", {{"gpu", 4}}) +
                           test::cohort_yaml("org", "root", {{"gpu", 2, {}, 1}}) +
                           test::cluster_queue_yaml("cq-x", "org", {{"gpu", 0}}) +
                           test::cluster_queue_yaml("cq-y", "root", {{"gpu", 0}}) +
                           test::local_queue_yaml("team-x", "main", "cq-x") +
                           test::local_queue_yaml("team-y", "main", "cq-y");
  Scheduler s(test::load_policy(yaml));
  test::add_nodes(s, "gpu", 1, 8);
  // cq-y can get root's 4 plus the 1 org lends, never 6.
  test::submit(s, {.name = "six", .pods = 6, .ns = "team-y"});
  test::submit(s, {.name = "five", .pods = 5, .created = t0 + 1s, .ns = "team-y"});
  const auto ds = s.schedule(t0 + 1s);
  ASSERT_EQ(test::admitted(ds), keys_of({"five"}, "team-y"));
  EXPECT_TRUE(ds[0].borrowing);
  EXPECT_EQ(s.explain(job_key("team-y", "six"), t0 + 1s).reason, reason::kExceedsMaxQuota);
  // org keeps one GPU for its own ClusterQueues.
  test::submit(s, {.name = "x1", .ns = "team-x"}, t0 + 2s);
  test::submit(s, {.name = "x2", .created = t0 + 1s, .ns = "team-x"}, t0 + 2s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 2s)), keys_of({"x1"}, "team-x"));
  EXPECT_EQ(s.explain(job_key("team-x", "x2"), t0 + 2s).reason, reason::kWaitingForQuota);
  // cq-x could take all six if the tree were empty.
  s.remove_workload(job_key("team-y", "five"), t0 + 3s);
  s.remove_workload(job_key("team-x", "x1"), t0 + 3s);
  s.remove_workload(job_key("team-x", "x2"), t0 + 3s);
  test::submit(s, {.name = "x6", .pods = 6, .ns = "team-x"}, t0 + 3s);
  EXPECT_EQ(test::admitted(s.schedule(t0 + 3s)), keys_of({"x6"}, "team-x"));
  expect_invariants(s);
}

class FlavorOrderTest : public ::testing::Test {
 protected:
  static std::string policy(const std::string& fungibility) {
    // x has a little of flavor a and more of b; the lender has plenty of a to lend.
    return test::flavor_yaml("a") + test::flavor_yaml("b") +
           test::cluster_queue_yaml("x", "pool", {{"a", 2}, {"b", 4}}, fungibility) +
           test::cluster_queue_yaml("lender", "pool", {{"a", 8}, {"b", 0}}) +
           test::local_queue_yaml("team-a", "main", "x");
  }
  void start(const std::string& fungibility) {
    s = std::make_unique<Scheduler>(test::load_policy(policy(fungibility)));
    test::add_nodes(*s, "a", 2, 8);
    test::add_nodes(*s, "b", 2, 8);
  }
  const Decision& admit_one(const Job& j, Time now) {
    test::submit(*s, j, now);
    last = s->schedule(now);
    EXPECT_EQ(test::admitted(last), keys_of({j.name.c_str()}));
    if (last.empty()) throw std::runtime_error(j.name + " was not admitted");
    return last.front();
  }
  std::unique_ptr<Scheduler> s;
  std::vector<Decision> last;
};

TEST_F(FlavorOrderTest, FlavorsAreTriedInOrder) {
  start("");
  const auto& first = admit_one({.name = "first", .gpu = gpus(2)}, t0);
  EXPECT_EQ(first.flavor, "a");
  EXPECT_EQ(first.node_labels.at(test::kFlavorLabel), "a");
  ASSERT_EQ(test::placed(first).size(), 1u);
  EXPECT_EQ(test::placed(first)[0].first.rfind("a-", 0), 0u) << test::placed(first)[0].first;
  // By default a flavor that fits by borrowing stops the search (Borrow / MayStopSearch).
  const auto& second = admit_one({.name = "second", .gpu = gpus(2)}, t0 + 1s);
  EXPECT_EQ(second.flavor, "a");
  EXPECT_TRUE(second.borrowing);
}

// whenCanBorrow: TryNextFlavor prefers a later flavor that fits without borrowing.
TEST_F(FlavorOrderTest, TryNextFlavorPrefersALaterFlavorWithoutBorrowing) {
  start("  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n");
  const auto& d = admit_one({.name = "three", .gpu = gpus(3)}, t0);
  EXPECT_EQ(d.flavor, "b");
  EXPECT_FALSE(d.borrowing);
  // Nothing later fits without borrowing: the borrowing flavor is taken after all.
  const auto& e = admit_one({.name = "five", .gpu = gpus(5)}, t0 + 1s);
  EXPECT_EQ(e.flavor, "a");
  EXPECT_TRUE(e.borrowing);
}

TEST_F(FlavorOrderTest, MayStopSearchBorrowsInTheFirstFlavor) {
  start("  flavorFungibility:\n    whenCanBorrow: MayStopSearch\n");
  const auto& d = admit_one({.name = "three", .gpu = gpus(3)}, t0);
  EXPECT_EQ(d.flavor, "a");
  EXPECT_TRUE(d.borrowing);
}

TEST_F(FlavorOrderTest, ExceedsMaxQuotaForMoreThanTheQueueCanEverGet) {
  start("");
  // a: 2 + 8 borrowed = 10; b: 4 and nothing to borrow. 11 GPUs: never.
  test::submit(*s, {.name = "huge", .gpu = gpus(1), .pods = 11});
  EXPECT_TRUE(s->schedule(t0).empty());
  const auto x = s->explain(job_key("team-a", "huge"), t0);
  EXPECT_EQ(x.reason, reason::kExceedsMaxQuota) << x.message;
  EXPECT_EQ(x.holder, "quota");
}

TEST_F(FlavorOrderTest, NodeSelectorPicksOrExcludesFlavors) {
  start("");
  const auto& d =
      admit_one({.name = "on-b", .gpu = gpus(1), .selector = {{test::kFlavorLabel, "b"}}}, t0);
  EXPECT_EQ(d.flavor, "b");
  test::submit(*s, {.name = "on-c", .selector = {{test::kFlavorLabel, "c"}}}, t0 + 1s);
  EXPECT_TRUE(s->schedule(t0 + 1s).empty());
  const auto x = s->explain(job_key("team-a", "on-c"), t0 + 1s);
  EXPECT_EQ(x.reason, reason::kNoMatchingFlavor) << x.message;
}

// Kueue's example of two resource groups: cpu and memory take a flavor (spot, else on-demand)
// and GPUs another (vendor1, else vendor2), each in its own order; the pods need nodes that have
// both flavors' labels.
TEST(QuotaTest, ResourceGroupsAssignTheirFlavorsIndependently) {
  auto flavor = [](const std::string& name, const std::string& key) {
    return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: " + name +
           "\nspec:\n  nodeLabels:\n    " + key + ": " + name + "\n---\n";
  };
  const std::string yaml =
      flavor("spot", "pool") + flavor("on-demand", "pool") + flavor("vendor1", "gpu") +
      flavor("vendor2", "gpu") +
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
      "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
      "  - coveredResources: [\"cpu\", \"memory\"]\n    flavors:\n"
      "    - name: spot\n      resources:\n      - {name: cpu, nominalQuota: 9}\n"
      "      - {name: memory, nominalQuota: 36Gi}\n"
      "    - name: on-demand\n      resources:\n      - {name: cpu, nominalQuota: 18}\n"
      "      - {name: memory, nominalQuota: 72Gi}\n"
      "  - coveredResources: [\"nvidia.com/gpu\"]\n    flavors:\n"
      "    - name: vendor1\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 2}\n"
      "    - name: vendor2\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 10}\n"
      "---\n" +
      test::local_queue_yaml("team-a", "main", "cq");
  Scheduler s(test::load_policy(yaml));
  for (const char* pool : {"spot", "on-demand"}) {
    for (const char* gpu : {"vendor1", "vendor2"}) {
      NodeInfo n = test::node(s, std::string(pool) + "-" + gpu, "", 8);
      n.labels = {{"pool", pool}, {"gpu", gpu}};
      s.upsert_node(n, t0);
    }
  }
  // 10 cpus do not fit spot's 9; 4 GPUs do not fit vendor1's 2.
  test::submit(s, {.name = "a", .gpu = gpus(4), .cpu = 10 * 1000});
  const auto ds = s.schedule(t0);
  ASSERT_EQ(test::admitted(ds), keys_of({"a"}));
  EXPECT_EQ(ds[0].flavor, "vendor2");  // the GPUs' flavor decides placement
  EXPECT_EQ(ds[0].node_labels, (policy::LabelMap{{"gpu", "vendor2"}, {"pool", "on-demand"}}));
  EXPECT_EQ(test::placed(ds[0]),
            (std::vector<std::pair<std::string, int64_t>>{{"on-demand-vendor2", 1}}));
  // A small one takes the first flavor of each group.
  test::submit(s, {.name = "b", .gpu = gpus(1), .created = t0 + 1s, .cpu = 1000}, t0 + 1s);
  const auto small = s.schedule(t0 + 1s);
  ASSERT_EQ(test::admitted(small), keys_of({"b"}));
  EXPECT_EQ(small[0].node_labels, (policy::LabelMap{{"gpu", "vendor1"}, {"pool", "spot"}}));
}

}  // namespace
}  // namespace gpuaas::core::admission
