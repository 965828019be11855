#include "gpuaas/admission/quota_tree.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "quota_tree_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using test::cluster_queue;
using test::cohort;
using test::flavor;
using test::k;
using test::quota;

// Kueue's documented two-team cohort: team-a 9 CPUs, team-b 12 CPUs (cluster_queue.md).
policy::PolicySet two_teams(std::optional<int64_t> a_borrowing, std::optional<int64_t> b_lending) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("default-flavor")};
  set.cluster_queues = {
      cluster_queue("team-a-cq", "team-ab",
                    {flavor("default-flavor", {quota("cpu", k(9), a_borrowing)})}),
      cluster_queue("team-b-cq", "team-ab",
                    {flavor("default-flavor", {quota("cpu", k(12), std::nullopt, b_lending)})}),
  };
  return set;
}

TEST(QuotaTreeTest, IndexesFlavorsResourcesQueuesAndCohorts) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("spot"), test::resource_flavor("on-demand")};
  set.cohorts = {cohort("org", "", {flavor("spot", {quota("cpu", k(4))})})};
  set.cluster_queues = {
      cluster_queue("a", "team", {flavor("on-demand", {quota("nvidia.com/gpu", k(2))})}),
      cluster_queue("alone", "", {flavor("spot", {quota("cpu", k(1))})}),
      cluster_queue("b", "org", {flavor("on-demand", {quota("cpu", k(3))})}),
  };
  set.cohorts.push_back(cohort("team", "org", {}));
  NameIndex resources;
  const int memory = resources.intern("memory");  // interned before, never written
  QuotaTree tree(set, resources);

  ASSERT_EQ(tree.flavor_count(), 2);
  EXPECT_EQ(tree.flavor_index("spot"), 0);  // PolicySet order, as placement uses
  EXPECT_EQ(tree.flavor_index("on-demand"), 1);
  EXPECT_EQ(tree.flavor_index("none"), -1);
  EXPECT_EQ(tree.flavor_name(1), "on-demand");

  const int cpu = resources.find("cpu");
  const int gpu = resources.find("nvidia.com/gpu");
  ASSERT_EQ(tree.fr_count(), 3);
  EXPECT_EQ(tree.fr_index(0, cpu), 0);  // by flavor, then by resource index
  EXPECT_EQ(tree.fr_index(1, gpu), 1);  // "a" named the GPU before "alone" named cpu
  EXPECT_EQ(tree.fr_index(1, cpu), 2);
  EXPECT_EQ(tree.fr_index(0, gpu), -1);
  EXPECT_EQ(tree.fr_index(0, memory), -1);
  EXPECT_EQ(tree.fr_index(0, resources.intern("later")), -1);
  EXPECT_EQ(tree.fr_index(-1, cpu), -1);
  EXPECT_EQ(tree.fr_flavor(1), 1);
  EXPECT_EQ(tree.fr_resource(1), gpu);

  ASSERT_EQ(tree.cluster_queue_count(), 3);
  EXPECT_EQ(tree.cluster_queue_index("b"), 2);
  EXPECT_EQ(tree.cluster_queue_index("nope"), -1);
  EXPECT_EQ(tree.cluster_queue_name(1), "alone");
  ASSERT_EQ(tree.cohort_count(), 2);
  EXPECT_EQ(tree.cohort_name(tree.root_of(0)), "org");  // a -> team -> org
  EXPECT_EQ(tree.root_of(2), tree.root_of(0));
  EXPECT_EQ(tree.root_of(1), -1);
  EXPECT_EQ(tree.cluster_queues_under_root_of(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(tree.cluster_queues_under_root_of(1), (std::vector<int>{1}));

  EXPECT_TRUE(tree.covers(0, 1));
  EXPECT_FALSE(tree.covers(0, 2));
  EXPECT_EQ(tree.nominal(0, 1), k(2));
  EXPECT_EQ(tree.nominal(0, 2), 0);
}

TEST(QuotaTreeTest, CohortsNamedOnlyByReferenceAreImplicitRoots) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("f")};
  set.cohorts = {cohort("child", "implicit-parent", {})};
  set.cluster_queues = {cluster_queue("a", "child", {flavor("f", {quota("cpu", k(1))})}),
                        cluster_queue("b", "elsewhere", {flavor("f", {quota("cpu", k(1))})})};
  NameIndex resources;
  QuotaTree tree(set, resources);
  ASSERT_EQ(tree.cohort_count(), 3);
  EXPECT_EQ(tree.cohort_name(tree.root_of(0)), "implicit-parent");
  EXPECT_EQ(tree.cohort_name(tree.root_of(1)), "elsewhere");
  EXPECT_EQ(tree.cluster_queues_under_root_of(1), (std::vector<int>{1}));
}

TEST(QuotaTreeTest, RefusesCohortCycles) {
  policy::PolicySet set;
  set.cohorts = {cohort("x", "y", {}), cohort("y", "x", {})};
  set.cluster_queues = {cluster_queue("a", "x", {})};
  NameIndex resources;
  EXPECT_THROW(QuotaTree(set, resources), std::invalid_argument);
}

TEST(QuotaTreeTest, SkipsQuotaOfUnknownFlavors) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("f")};
  set.cluster_queues = {cluster_queue(
      "a", "", {flavor("f", {quota("cpu", k(1))}), flavor("missing", {quota("cpu", k(5))})})};
  NameIndex resources;
  QuotaTree tree(set, resources);
  EXPECT_EQ(tree.fr_count(), 1);
  EXPECT_EQ(tree.available(0, 0), k(1));
}

// Without limits, each ClusterQueue may use the whole cohort: 12+9=21 CPUs.
TEST(QuotaTreeTest, BorrowsUnusedQuotaWithinTheCohort) {
  NameIndex resources;
  QuotaTree tree(two_teams(std::nullopt, std::nullopt), resources);
  const int a = 0, b = 1, cpu = 0;
  EXPECT_EQ(tree.available(a, cpu), k(21));
  EXPECT_EQ(tree.available(b, cpu), k(21));
  EXPECT_EQ(tree.potential_available(a, cpu), k(21));

  tree.add_usage(a, {{cpu, k(10)}}, +1);  // borrows 1 of team-b's
  EXPECT_TRUE(tree.is_borrowing(a));
  EXPECT_EQ(tree.available(a, cpu), k(11));
  EXPECT_EQ(tree.available(b, cpu), k(11));  // the 12th needs reclaiming
  tree.add_usage(b, {{cpu, k(11)}}, +1);
  EXPECT_EQ(tree.available(a, cpu), 0);
  EXPECT_EQ(tree.available(b, cpu), 0);
  EXPECT_TRUE(tree.check_invariants());
}

// borrowingLimit 1 on team-a: at most 9+1=10 CPUs even when team-b is idle.
TEST(QuotaTreeTest, BorrowingLimitCapsWhatIsTakenFromTheCohort) {
  NameIndex resources;
  QuotaTree tree(two_teams(k(1), std::nullopt), resources);
  const int a = 0, b = 1, cpu = 0;
  EXPECT_EQ(tree.available(a, cpu), k(10));
  EXPECT_EQ(tree.potential_available(a, cpu), k(10));
  EXPECT_EQ(tree.available(b, cpu), k(21));  // the limit binds team-a only

  tree.add_usage(b, {{cpu, k(12)}}, +1);
  EXPECT_EQ(tree.available(a, cpu), k(9));
  tree.add_usage(b, {{cpu, k(12)}}, -1);
  tree.add_usage(a, {{cpu, k(10)}}, +1);
  EXPECT_EQ(tree.available(a, cpu), 0);  // the cohort has 11 left, the limit is reached
  EXPECT_EQ(tree.available(b, cpu), k(11));
  EXPECT_TRUE(tree.check_invariants());
}

// lendingLimit 1 on team-b: team-a gets at most 9+1=10; team-b keeps 11 nobody can take.
TEST(QuotaTreeTest, LendingLimitKeepsGuaranteedQuota) {
  NameIndex resources;
  QuotaTree tree(two_teams(std::nullopt, k(1)), resources);
  const int a = 0, b = 1, cpu = 0;
  EXPECT_EQ(tree.available(a, cpu), k(10));
  EXPECT_EQ(tree.potential_available(a, cpu), k(10));
  EXPECT_EQ(tree.available(b, cpu), k(21));
  EXPECT_EQ(tree.potential_available(b, cpu), k(21));

  tree.add_usage(a, {{cpu, k(10)}}, +1);
  EXPECT_EQ(tree.available(a, cpu), 0);
  EXPECT_EQ(tree.available(b, cpu), k(11));  // its guarantee, untouched
  tree.add_usage(b, {{cpu, k(11)}}, +1);
  EXPECT_EQ(tree.available(b, cpu), 0);  // the 12th was lent
  EXPECT_TRUE(tree.check_invariants());
  tree.add_usage(a, {{cpu, k(10)}}, -1);
  EXPECT_EQ(tree.available(b, cpu), k(10));  // 12th own + 9 of team-a's
  EXPECT_EQ(tree.available(a, cpu), k(10));
}

// A hierarchy with quota on cohorts (cohort.md): org holds 10 GPUs itself; team holds 4, lends
// org at most 2 and borrows at most 3; x (2) and y (0, borrowingLimit 1) sit in team; z (6) in
// other. Subtree quotas: team 4+2=6 (guarantee 4), other 6, org 10+2+6=18.
class HierarchyTest : public ::testing::Test {
 protected:
  static policy::PolicySet policy_set() {
    policy::PolicySet set;
    set.flavors = {test::resource_flavor("gpu")};
    set.cohorts = {
        cohort("org", "", {flavor("gpu", {quota("gpu", k(10))})}),
        cohort("team", "org", {flavor("gpu", {quota("gpu", k(4), k(3), k(2))})}),
        cohort("other", "org", {}),
    };
    set.cluster_queues = {
        cluster_queue("x", "team", {flavor("gpu", {quota("gpu", k(2))})}),
        cluster_queue("y", "team", {flavor("gpu", {quota("gpu", 0, k(1))})}),
        cluster_queue("z", "other", {flavor("gpu", {quota("gpu", k(6))})}),
    };
    return set;
  }
  NameIndex resources;
  QuotaTree tree{policy_set(), resources};
  const int x = 0, y = 1, z = 2, gpu = 0;
};

TEST_F(HierarchyTest, AvailableFollowsLimitsAtEveryLevel) {
  EXPECT_EQ(tree.available(x, gpu), k(9));  // team's 6 + its borrowingLimit 3
  EXPECT_EQ(tree.available(y, gpu), k(1));
  EXPECT_EQ(tree.available(z, gpu), k(18));  // all but team's guarantee
  EXPECT_EQ(tree.potential_available(x, gpu), k(9));
  EXPECT_EQ(tree.potential_available(z, gpu), k(18));

  tree.add_usage(x, {{gpu, k(5)}}, +1);  // 4 from team's guarantee, 1 from org
  EXPECT_EQ(tree.available(x, gpu), k(4));
  EXPECT_EQ(tree.available(y, gpu), k(1));
  EXPECT_EQ(tree.available(z, gpu), k(17));
  tree.add_usage(z, {{gpu, k(17)}}, +1);
  EXPECT_EQ(tree.available(x, gpu), 0);
  EXPECT_EQ(tree.available(y, gpu), 0);
  EXPECT_TRUE(tree.check_invariants());

  tree.add_usage(x, {{gpu, k(5)}}, -1);  // team's guarantee is back, org has 1 left
  EXPECT_EQ(tree.available(x, gpu), k(5));
  EXPECT_EQ(tree.available(y, gpu), k(1));
  EXPECT_EQ(tree.available(z, gpu), k(1));
}

TEST_F(HierarchyTest, PotentialAvailableTellsNeverFromNotNow) {
  tree.add_usage(z, {{gpu, k(18)}}, +1);
  EXPECT_EQ(tree.available(x, gpu), k(4));  // only team's guarantee
  EXPECT_EQ(tree.potential_available(x, gpu), k(9));
  // 6 GPUs: not now (6 > 4) but possibly later (6 <= 9); 10: never.
  EXPECT_GT(k(6), tree.available(x, gpu));
  EXPECT_LE(k(6), tree.potential_available(x, gpu));
  EXPECT_GT(k(10), tree.potential_available(x, gpu));
}

TEST_F(HierarchyTest, AvailableIsNegativeWhenOvercommitted) {
  tree.add_usage(y, {{gpu, k(3)}}, +1);  // as if admitted under a larger quota
  EXPECT_EQ(tree.available(y, gpu), -k(2));
  std::string why;
  EXPECT_FALSE(tree.check_invariants(&why));
  EXPECT_NE(why.find("ClusterQueue y"), std::string::npos) << why;
  EXPECT_NE(why.find("borrowingLimit"), std::string::npos) << why;
}

TEST(QuotaTreeTest, AClusterQueueOnlyBorrowsWhatItLists) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("f")};
  set.cluster_queues = {cluster_queue("a", "c", {flavor("f", {quota("cpu", k(4))})}),
                        cluster_queue("b", "c", {flavor("f", {quota("gpu", k(8))})})};
  NameIndex resources;
  QuotaTree tree(set, resources);
  const int gpu = tree.fr_index(0, resources.find("gpu"));
  EXPECT_EQ(tree.available(0, gpu), 0);
  EXPECT_EQ(tree.potential_available(0, gpu), 0);
  EXPECT_EQ(tree.available(1, gpu), k(8));
}

// Fair sharing: a (weight 2) and b share cohort c, which can lend 4+6=10 CPUs and 2+2=4 GPUs
// (GPUs over two flavors: a holds a100s, b h100s).
policy::PolicySet fair_pair(double b_weight) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("default"), test::resource_flavor("a100"),
                 test::resource_flavor("h100")};
  set.cluster_queues = {
      cluster_queue("a", "c",
                    {flavor("default", {quota("cpu", k(4))}), flavor("a100", {quota("gpu", k(2))}),
                     flavor("h100", {quota("gpu", 0)})},
                    2.0),
      cluster_queue("b", "c",
                    {flavor("default", {quota("cpu", k(6))}), flavor("a100", {quota("gpu", 0)}),
                     flavor("h100", {quota("gpu", k(2))})},
                    b_weight),
      cluster_queue("alone", "", {flavor("default", {quota("cpu", k(1))})}),
  };
  return set;
}

TEST(QuotaTreeTest, DominantResourceShareIsTheLargestBorrowedShareOverWeight) {
  NameIndex resources;
  QuotaTree tree(fair_pair(1.0), resources);
  const int a = 0, b = 1, alone = 2;
  const int cpu = tree.fr_index(0, resources.find("cpu"));
  const int a100 = tree.fr_index(1, resources.find("gpu"));
  const int h100 = tree.fr_index(2, resources.find("gpu"));
  EXPECT_EQ(tree.dominant_resource_share(a), 0);
  tree.add_usage(a, {{cpu, k(4)}, {a100, k(2)}}, +1);
  EXPECT_EQ(tree.dominant_resource_share(a), 0);  // at nominal: not borrowing

  // cpu: 1 of 10 lendable = 100; gpu: 1 of 4 = 250; the larger over weight 2.
  tree.add_usage(a, {{cpu, k(1)}, {h100, k(1)}}, +1);
  EXPECT_EQ(tree.dominant_resource_share(a), 125);
  EXPECT_DOUBLE_EQ(tree.precise_dominant_resource_share(a), 125.0);
  // Borrowed GPUs add up over flavors: 1 a100 + 2 h100 = 3 of 4.
  EXPECT_EQ(tree.dominant_resource_share(a, {{a100, k(1)}, {h100, k(1)}}), 375);
  EXPECT_EQ(tree.dominant_resource_share(a, {{h100, -k(1)}}), 50);  // as if one left: cpu only

  tree.add_usage(b, {{cpu, k(7)}}, +1);
  EXPECT_EQ(tree.dominant_resource_share(b), 100);
  // No cohort: no share, whatever it uses.
  tree.add_usage(alone, {{cpu, k(3)}}, +1);
  EXPECT_EQ(tree.dominant_resource_share(alone), 0);
}

TEST(QuotaTreeTest, DominantResourceShareRoundsUpAndZeroWeightBorrowsLast) {
  NameIndex resources;
  QuotaTree thirds(fair_pair(3.0), resources);
  thirds.add_usage(1, {{0, k(7)}}, +1);  // 100 per mille over weight 3
  EXPECT_EQ(thirds.dominant_resource_share(1), 34);
  EXPECT_NEAR(thirds.precise_dominant_resource_share(1), 100.0 / 3, 1e-9);

  QuotaTree zero(fair_pair(0.0), resources);
  zero.add_usage(1, {{0, k(6)}}, +1);
  EXPECT_EQ(zero.dominant_resource_share(1), 0);  // not borrowing
  zero.add_usage(1, {{0, 1}}, +1);
  EXPECT_EQ(zero.dominant_resource_share(1), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(zero.precise_dominant_resource_share(1), std::numeric_limits<double>::infinity());
}

// The divisor is what the parent could lend were nothing in use (its potentialAvailable), so a
// cohort without quota of its own still lends what its parent holds: here 10 + 2 + 2 = 14.
TEST(QuotaTreeTest, DominantResourceShareDividesByWhatTheParentCouldLend) {
  policy::PolicySet set;
  set.flavors = {test::resource_flavor("f")};
  set.cohorts = {cohort("root", "", {flavor("f", {quota("cpu", k(10))})}),
                 cohort("mid", "root", {})};
  set.cluster_queues = {cluster_queue("a", "mid", {flavor("f", {quota("cpu", k(2))})}),
                        cluster_queue("b", "mid", {flavor("f", {quota("cpu", k(2))})})};
  NameIndex resources;
  QuotaTree tree(set, resources);
  tree.add_usage(0, {{0, k(5)}}, +1);
  EXPECT_EQ(tree.dominant_resource_share(0), 215);  // 3000 * 1000 / 14000 = 214.3, rounded up
}

TEST(QuotaTreeTest, WouldBorrowAndIsBorrowingCompareWithNominal) {
  NameIndex resources;
  QuotaTree tree(two_teams(std::nullopt, std::nullopt), resources);
  const int a = 0, cpu = 0;
  tree.add_usage(a, {{cpu, k(8)}}, +1);
  EXPECT_FALSE(tree.is_borrowing(a));
  EXPECT_FALSE(tree.would_borrow(a, cpu, k(1)));
  EXPECT_TRUE(tree.would_borrow(a, cpu, k(1) + 1));
  tree.add_usage(a, {{cpu, k(1)}}, +1);
  EXPECT_FALSE(tree.is_borrowing(a));  // exactly at nominal
  tree.add_usage(a, {{cpu, 1}}, +1);
  EXPECT_TRUE(tree.is_borrowing(a));
}

}  // namespace
}  // namespace gpuaas::core::admission
