// PolicySet lookups and the Kubernetes semantics of label selectors and tolerations.
#include "gpuaas/policy/policy_set.hpp"

#include <gtest/gtest.h>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::policy {
namespace {

TEST(SourceRef, PrintsFileLineColumn) {
  EXPECT_EQ((SourceRef{"a.yaml", 3, 14}).str(), "a.yaml:3:14");
  EXPECT_EQ((SourceRef{"gone.yaml", 0, 0}).str(), "gone.yaml");  // the whole file
  EXPECT_EQ((Diagnostic{{"a.yaml", 3, 14}, "bad"}).str(), "a.yaml:3:14: bad");
  EXPECT_EQ((Diagnostic{{"gone.yaml", 0, 0}, "cannot read"}).str(), "gone.yaml: cannot read");
}

TEST(PolicySet, LookupsByName) {
  PolicySet s;
  s.flavors.push_back({"h100", {}, {}, {}, {}});
  s.cohorts.push_back({"org", "", {}, 1.0, true, {}});
  s.cluster_queues.push_back(ClusterQueue{});
  s.cluster_queues.back().name = "team-a";
  s.local_queues.push_back({"team-a", "main", "team-a", StopPolicy::kNone, 1.0, {}});
  s.priority_classes.push_back({"high", 1000, "", {}});
  ASSERT_NE(s.flavor("h100"), nullptr);
  EXPECT_EQ(s.flavor("a100"), nullptr);
  EXPECT_TRUE(s.cohort("org")->implicit);
  EXPECT_EQ(s.cluster_queue("team-a")->name, "team-a");
  EXPECT_EQ(s.cluster_queue("team-b"), nullptr);
  EXPECT_EQ(s.local_queue("team-a", "main")->cluster_queue, "team-a");
  EXPECT_EQ(s.local_queue("team-b", "main"), nullptr);
  EXPECT_EQ(s.local_queue("main", "team-a"), nullptr);
  EXPECT_EQ(s.priority_class("high")->value, 1000);
  EXPECT_EQ(s.priority_class("low"), nullptr);
}

TEST(LabelSelector, AbsentMatchesNothingEmptyMatchesAll) {
  LabelSelector absent;
  EXPECT_FALSE(absent.matches({}));
  EXPECT_FALSE(absent.matches({{"team", "a"}}));
  LabelSelector all;
  all.present = true;
  EXPECT_TRUE(all.matches({}));
  EXPECT_TRUE(all.matches({{"team", "a"}}));
}

TEST(LabelSelector, LabelsAndExpressionsAllMustHold) {
  LabelSelector s;
  s.present = true;
  s.match_labels = {{"team", "a"}};
  s.match_expressions = {{"tier", "In", {"gold", "silver"}},
                         {"env", "NotIn", {"dev"}},
                         {"owner", "Exists", {}},
                         {"frozen", "DoesNotExist", {}}};
  LabelMap ok = {{"team", "a"}, {"tier", "gold"}, {"owner", "x"}};
  EXPECT_TRUE(s.matches(ok));
  auto with = [&](const std::string& k, const std::string& v) {
    LabelMap m = ok;
    m[k] = v;
    return m;
  };
  EXPECT_FALSE(s.matches(with("team", "b")));
  EXPECT_FALSE(s.matches(with("tier", "bronze")));
  EXPECT_TRUE(s.matches(with("env", "prod")));
  EXPECT_FALSE(s.matches(with("env", "dev")));
  EXPECT_FALSE(s.matches(with("frozen", "")));
  LabelMap no_owner = ok;
  no_owner.erase("owner");
  EXPECT_FALSE(s.matches(no_owner));
  LabelMap no_tier = ok;
  no_tier.erase("tier");
  EXPECT_FALSE(s.matches(no_tier));  // In needs the label
}

TEST(Toleration, KubernetesSemantics) {
  Taint spot{"spot", "true", "NoSchedule"};
  EXPECT_TRUE((Toleration{"spot", "Equal", "true", "NoSchedule", {}}).tolerates(spot));
  EXPECT_FALSE((Toleration{"spot", "Equal", "false", "NoSchedule", {}}).tolerates(spot));
  EXPECT_TRUE((Toleration{"spot", "Exists", "", "", {}}).tolerates(spot));  // any effect
  EXPECT_FALSE((Toleration{"spot", "Exists", "", "NoExecute", {}}).tolerates(spot));
  EXPECT_FALSE((Toleration{"gpu", "Exists", "", "", {}}).tolerates(spot));
  EXPECT_TRUE((Toleration{"", "Exists", "", "", {}}).tolerates(spot));  // tolerates everything
  EXPECT_TRUE((Toleration{"", "Exists", "", "NoSchedule", {}}).tolerates(spot));
  EXPECT_FALSE((Toleration{"", "Exists", "", "NoExecute", {}}).tolerates(spot));
  EXPECT_TRUE((Toleration{"spot", "", "true", "", {}}).tolerates(spot));  // "" is Equal
}

TEST(Toleration, JsonAsKubernetesWritesIt) {
  EXPECT_EQ((Toleration{"nvidia.com/gpu", "Exists", "", "NoSchedule", {}}).json(),
            R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
  EXPECT_EQ((Toleration{"a\"b", "Equal", "v", "NoExecute", 300}).json(),
            R"({"key":"a\"b","operator":"Equal","value":"v","effect":"NoExecute",)"
            R"("tolerationSeconds":300})");
  EXPECT_EQ((Toleration{"", "Exists", "", "", {}}).json(), R"({"operator":"Exists"})");
}

TEST(EnumNames, AsKueueSpellsThem) {
  EXPECT_STREQ(to_string(QueueingStrategy::kStrictFIFO), "StrictFIFO");
  EXPECT_STREQ(to_string(WithinClusterQueue::kLowerOrNewerEqualPriority),
               "LowerOrNewerEqualPriority");
  EXPECT_STREQ(to_string(ReclaimWithinCohort::kAny), "Any");
  EXPECT_STREQ(to_string(BorrowWithinCohort::kLowerPriority), "LowerPriority");
  EXPECT_STREQ(to_string(StopPolicy::kHoldAndDrain), "HoldAndDrain");
  EXPECT_STREQ(to_string(FungibilityChoice::kMayStopSearch), "MayStopSearch");
}

}  // namespace
}  // namespace gpuaas::policy
