// Each mistake in a ClusterQueue's or Cohort's quota is an error at the FILE:LINE:COLUMN where it
// was written, with a message that names the field and the problem.
#include <gtest/gtest.h>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using testing::joined;
using testing::load_text;

// A flavor (lines 1-4) and a ClusterQueue (from line 6) whose resourceGroups (line 13) are
// `groups`, from line 14 on.
std::string queue_with(const std::string& groups, const std::string& cohort = "") {
  return "apiVersion: kueue.x-k8s.io/v1beta2\n"  // 1
         "kind: ResourceFlavor\n"                // 2
         "metadata:\n"                           // 3
         "  name: h100\n"                        // 4
         "---\n"                                 // 5
         "apiVersion: kueue.x-k8s.io/v1beta2\n"  // 6
         "kind: ClusterQueue\n"                  // 7
         "metadata:\n"                           // 8
         "  name: team-a\n"                      // 9
         "spec:\n"                               // 10
         "  namespaceSelector: {}\n"             // 11
         "  cohortName: " +
         (cohort.empty() ? std::string("\"\"") : cohort) +
         "\n"  // 12
         "  resourceGroups:\n" +
         groups;
}

// Expects exactly one error, at line:column of p.yaml, whose message contains `text`.
void expect_error(const LoadResult& r, int line, int column, const std::string& text) {
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.str(), "p.yaml:" + std::to_string(line) + ":" + std::to_string(column))
      << joined(r.errors);
  EXPECT_NE(r.errors[0].message.find(text), std::string::npos) << r.errors[0].message;
}

TEST(QuotaErrors, ValidQueueLoads) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 64
      - name: nvidia.com/gpu
        nominalQuota: 8
        borrowingLimit: 4
        lendingLimit: 2
)",
                                "research"));
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  const auto& gpu =
      r.set.cluster_queue("team-a")->resource_groups.at(0).flavors.at(0).resources.at(1);
  EXPECT_EQ(gpu.nominal_milli, 8000);
  EXPECT_EQ(gpu.borrowing_limit_milli, 4000);
  EXPECT_EQ(gpu.lending_limit_milli, 2000);
  EXPECT_EQ(gpu.at.str(), "p.yaml:20:15");  // its name
  EXPECT_EQ(r.set.cluster_queue("team-a")->resource_groups[0].flavors[0].at.str(), "p.yaml:16:13");
}

TEST(QuotaErrors, MisspelledFieldIsAnErrorAtItsKey) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuta: 64
)"));
  // Only the typo: "nominalQuota is missing" would repeat it.
  expect_error(r, 19, 9, "unknown field \"nominalQuta\"");
  EXPECT_NE(r.errors[0].message.find("did you mean \"nominalQuota\"?"), std::string::npos);
}

TEST(QuotaErrors, UnknownFieldFarFromAnyListsTheKnownOnes) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    colour: blue
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 1}
)"));
  expect_error(r, 15, 5,
               "unknown field \"colour\" in spec.resourceGroups[0] (known fields: "
               "coveredResources, flavors)");
}

TEST(QuotaErrors, NotAQuantityIsAnErrorAtTheValue) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: lots
)"));
  expect_error(r, 19, 23,
               "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: \"lots\" is not a "
               "quantity");
}

TEST(QuotaErrors, AListWhereAQuantityBelongs) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: [1]}
)"));
  expect_error(r, 18, 35, "nominalQuota must be a quantity");
}

TEST(QuotaErrors, NegativeQuota) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: -2}
)"));
  expect_error(r, 18, 35, "\"-2\" is negative");
}

TEST(QuotaErrors, LimitsNeedACohort) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 4, borrowingLimit: 1, lendingLimit: 1}
)"));
  ASSERT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:18:54: spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit needs a "
            "cohort, and spec.cohortName is empty");
  EXPECT_EQ(r.errors[1].at.str(), "p.yaml:18:71");
  EXPECT_NE(r.errors[1].message.find("lendingLimit needs a cohort"), std::string::npos);
}

TEST(QuotaErrors, LendingLimitAboveNominalQuota) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 4, lendingLimit: 5}
)",
                                "research"));
  expect_error(r, 18, 52, "lendingLimit 5 is more than nominalQuota 4");
}

TEST(QuotaErrors, ResourceCoveredByTwoGroups) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources: [{name: cpu, nominalQuota: 1}]
  - coveredResources: [memory, cpu]
    flavors:
    - name: a100
      resources: [{name: memory, nominalQuota: 1}, {name: cpu, nominalQuota: 1}]
)") + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n");
  expect_error(r, 18, 32, "resource \"cpu\" is covered by spec.resourceGroups[0] already");
}

TEST(QuotaErrors, FlavorInTwoGroups) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h100
      resources: [{name: cpu, nominalQuota: 1}]
  - coveredResources: [memory]
    flavors:
    - name: h100
      resources: [{name: memory, nominalQuota: 1}]
)"));
  expect_error(r, 20, 13, "flavor \"h100\" is listed in spec.resourceGroups[0].flavors[0] already");
}

TEST(QuotaErrors, ResourcesInAnotherOrderThanCovered) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu, memory]
    flavors:
    - name: h100
      resources:
      - {name: memory, nominalQuota: 1}
      - {name: cpu, nominalQuota: 1}
)"));
  ASSERT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:18:16: spec.resourceGroups[0].flavors[0].resources[0].name is \"memory\" but "
            "coveredResources[0] is \"cpu\": list the covered resources, same names in the same "
            "order");
  EXPECT_EQ(r.errors[1].at.str(), "p.yaml:19:16");
}

TEST(QuotaErrors, FewerResourcesThanCovered) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu, memory]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 1}
)"));
  expect_error(r, 18, 7, "resources lists 1 resources but coveredResources lists 2 (cpu, memory)");
}

TEST(QuotaErrors, CoveredResourcesMustBeAList) {
  auto r = load_text(queue_with(R"(  - coveredResources: cpu
    flavors:
    - name: h100
      resources: [{name: cpu, nominalQuota: 1}]
)"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:14:23: spec.resourceGroups[0].coveredResources must be a list");
}

TEST(QuotaErrors, MissingFlavorIsAnErrorAtItsName) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu]
    flavors:
    - name: h200
      resources: [{name: cpu, nominalQuota: 1}]
)"));
  expect_error(r, 16, 13,
               "ClusterQueue \"team-a\" names ResourceFlavor \"h200\", which is not defined");
}

TEST(QuotaErrors, CohortQuotaMayLendMoreThanItsOwnButNeedsAParentForLimits) {
  // Kueue checks lendingLimit <= nominalQuota on ClusterQueues only: a Cohort lends its subtree.
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
spec:
  parentName: org
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 2, lendingLimit: 6}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 2, borrowingLimit: 1}]
)");
  expect_error(r, 24, 75, "borrowingLimit needs a parent Cohort, and spec.parentName is empty");
  const auto* research = r.set.cohort("research");
  ASSERT_NE(research, nullptr);
  EXPECT_EQ(research->resource_groups.at(0).flavors.at(0).resources.at(0).lending_limit_milli,
            6000);
}

TEST(QuotaErrors, EveryErrorIsReportedNotJustTheFirst) {
  auto r = load_text(queue_with(R"(  - coveredResources: [cpu, memory]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: many}
      - {name: memory, nominalQuota: -1Gi}
)"));
  ASSERT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.str(), "p.yaml:18:35");
  EXPECT_EQ(r.errors[1].at.str(), "p.yaml:19:38");
}

}  // namespace
}  // namespace gpuaas::policy
