// Mistakes within one object: kinds and apiVersions, metadata, enum values, types, selectors,
// tolerations, LocalQueues and WorkloadPriorityClasses; each at its FILE:LINE:COLUMN.
#include <gtest/gtest.h>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using testing::joined;
using testing::load_text;

void expect_error(const LoadResult& r, const std::string& at, const std::string& text) {
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.str(), at) << joined(r.errors);
  EXPECT_NE(r.errors[0].message.find(text), std::string::npos) << r.errors[0].message;
}

TEST(ObjectErrors, YamlSyntaxErrorIsOneErrorWithItsMark) {
  auto r = load_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: [ResourceFlavor\nmetadata: {}\n");
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.line, 3);
  EXPECT_GE(r.errors[0].at.column, 1);
  EXPECT_EQ(r.errors[0].message.rfind("YAML syntax error: ", 0), 0u) << r.errors[0].message;
}

TEST(ObjectErrors, NonPolicyKindsAndUnknownApiVersions) {
  auto r = load_text(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: c}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueu
metadata: {name: c}
---
apiVersion: gpuaas.io/v1alpha1
kind: ScalePolicy
metadata: {name: s}
---
apiVersion: kueue.x-k8s.io/v1beta2
metadata: {name: x}
---
- just
- a list
)");
  ASSERT_EQ(r.errors.size(), 6u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:2:7: kind Deployment (apps/v1) is not a policy kind: policy files hold "
            "Kueue's kinds (kueue.x-k8s.io) and gpuaas.io/v1alpha1 AdmissionPolicy");
  EXPECT_EQ(r.errors[1].at.str(), "p.yaml:5:13");
  EXPECT_NE(r.errors[1].message.find("write kueue.x-k8s.io/v1beta1 or v1beta2"), std::string::npos);
  EXPECT_EQ(r.errors[2].at.str(), "p.yaml:10:7");
  EXPECT_NE(r.errors[2].message.find("unknown kind \"ClusterQueu\""), std::string::npos);
  EXPECT_EQ(r.errors[3].at.str(), "p.yaml:14:7");
  EXPECT_NE(r.errors[3].message.find("unknown kind \"ScalePolicy\""), std::string::npos);
  EXPECT_EQ(r.errors[4].str(), "p.yaml:17:1: kind is missing");
  EXPECT_EQ(r.errors[5].at.str(), "p.yaml:20:1");
  EXPECT_NE(r.errors[5].message.find("must be a mapping"), std::string::npos);
}

TEST(ObjectErrors, MissingAndInvalidNames) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  labels: {a: b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: H100_80GB}
)");
  ASSERT_EQ(r.errors.size(), 3u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(), "p.yaml:3:1: metadata.name is missing");
  EXPECT_EQ(r.errors[1].str(), "p.yaml:6:1: ResourceFlavor has no metadata.name");
  EXPECT_EQ(r.errors[2].at.str(), "p.yaml:12:18");
  EXPECT_NE(r.errors[2].message.find("metadata.name \"H100_80GB\" is not a valid name"),
            std::string::npos);
}

TEST(ObjectErrors, BadEnumValuesListTheAllowedOnes) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  queueingStrategy: FIFO
  stopPolicy: Pause
  preemption:
    withinClusterQueue: Always
    reclaimWithinCohort: Sometimes
  flavorFungibility:
    whenCanBorrow: Maybe
)");
  ASSERT_EQ(r.errors.size(), 5u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:6:21: spec.queueingStrategy: \"FIFO\" is not one of StrictFIFO or "
            "BestEffortFIFO");
  EXPECT_EQ(r.errors[1].str(),
            "p.yaml:7:15: spec.stopPolicy: \"Pause\" is not one of None, Hold or HoldAndDrain");
  EXPECT_EQ(r.errors[2].str(),
            "p.yaml:9:25: spec.preemption.withinClusterQueue: \"Always\" is not one of Never, "
            "LowerPriority or LowerOrNewerEqualPriority");
  EXPECT_EQ(r.errors[3].str(),
            "p.yaml:10:26: spec.preemption.reclaimWithinCohort: \"Sometimes\" is not one of "
            "Never, LowerPriority or Any");
  EXPECT_EQ(r.errors[4].str(),
            "p.yaml:12:20: spec.flavorFungibility.whenCanBorrow: \"Maybe\" is not one of "
            "MayStopSearch, Borrow or TryNextFlavor");
}

TEST(ObjectErrors, BothFungibilitySpellingsInBothVersions) {
  for (const char* version : {"v1beta1", "v1beta2"}) {
    auto r = load_text(std::string("apiVersion: kueue.x-k8s.io/") + version + R"(
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
---
apiVersion: kueue.x-k8s.io/)" +
                       version + R"(
kind: ClusterQueue
metadata: {name: r}
spec:
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch}
)");
    ASSERT_TRUE(r.ok()) << version << "\n" << joined(r.errors);
    const auto& q = r.set.cluster_queue("q")->flavor_fungibility;
    EXPECT_EQ(q.when_can_borrow, FungibilityChoice::kMayStopSearch);
    EXPECT_EQ(q.when_can_preempt, FungibilityChoice::kMayStopSearch);
    const auto& s = r.set.cluster_queue("r")->flavor_fungibility;
    EXPECT_EQ(s.when_can_borrow, FungibilityChoice::kTryNextFlavor);
    EXPECT_EQ(s.when_can_preempt, FungibilityChoice::kMayStopSearch);
  }
}

TEST(ObjectErrors, CohortFieldIsSpelledByVersion) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  cohortName: research
)");
  expect_error(r, "p.yaml:6:3",
               "spec.cohortName is not a field of kueue.x-k8s.io/v1beta1 ClusterQueue; write "
               "spec.cohort");
  // Still read, so the cohort exists and no second error follows from the first.
  EXPECT_EQ(r.set.cluster_queue("q")->cohort, "research");
}

TEST(ObjectErrors, BorrowWithinCohortNeedsReclaim) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  preemption:
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
)");
  expect_error(r, "p.yaml:7:34", "needs reclaimWithinCohort other than Never");
  EXPECT_EQ(r.set.cluster_queue("q")->preemption.borrow_max_priority_threshold, 100);
}

TEST(ObjectErrors, NegativeFairSharingWeightAndMilliWeights) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  fairSharing: {weight: 500m}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: c}
spec:
  fairSharing:
    weight: -1
)");
  expect_error(r, "p.yaml:13:13", "spec.fairSharing.weight: \"-1\" is negative");
  EXPECT_DOUBLE_EQ(r.set.cluster_queue("q")->fair_weight, 0.5);
}

TEST(ObjectErrors, NamespaceSelectorAbsentIsAWarning) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  queueingStrategy: StrictFIFO
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].at.str(), "p.yaml:4:1");
  EXPECT_NE(r.warnings[0].message.find("admits workloads from no namespace"), std::string::npos);
  EXPECT_FALSE(r.set.cluster_queue("q")->namespace_selector.present);
  EXPECT_FALSE(r.set.cluster_queue("q")->namespace_selector.matches({}));
}

TEST(ObjectErrors, SelectorOperatorsAndTheirValues) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector:
    matchLabels: {team: a}
    matchExpressions:
    - {key: tier, operator: In, values: [gold, silver]}
    - {key: frozen, operator: DoesNotExist}
    - {key: x, operator: In}
    - {key: y, operator: Exists, values: [z]}
    - {key: z, operator: Near, values: [a]}
)");
  ASSERT_EQ(r.errors.size(), 3u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:10:26: spec.namespaceSelector.matchExpressions[2]: operator In needs values");
  EXPECT_EQ(r.errors[1].str(),
            "p.yaml:11:42: spec.namespaceSelector.matchExpressions[3]: operator Exists takes no "
            "values");
  EXPECT_EQ(r.errors[2].at.str(), "p.yaml:12:26");
  const auto& sel = r.set.cluster_queue("q")->namespace_selector;
  EXPECT_EQ(sel.match_labels.at("team"), "a");
  ASSERT_GE(sel.match_expressions.size(), 2u);
  EXPECT_EQ(sel.match_expressions[0].values, (std::vector<std::string>{"gold", "silver"}));
}

TEST(ObjectErrors, TaintsAndTolerationsFollowTheApiServer) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeTaints:
  - {key: spot, value: "true", effect: NoSchedule}
  - {key: other, effect: Sometimes}
  tolerations:
  - {operator: Equal, value: x}
  - {key: a, operator: Exists, value: b}
  - {key: c, effect: NoSchedule, tolerationSeconds: 30}
  - {key: d, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
)");
  ASSERT_EQ(r.errors.size(), 4u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.str(), "p.yaml:7:26");
  EXPECT_NE(r.errors[0].message.find("is not one of NoSchedule, PreferNoSchedule or NoExecute"),
            std::string::npos);
  EXPECT_EQ(r.errors[1].str(),
            "p.yaml:9:16: spec.tolerations[0]: operator must be Exists when key is empty (that "
            "matches all keys)");
  EXPECT_EQ(r.errors[2].str(),
            "p.yaml:10:39: spec.tolerations[1]: value must be empty when operator is Exists");
  EXPECT_EQ(r.errors[3].str(),
            "p.yaml:11:53: spec.tolerations[2].tolerationSeconds needs effect NoExecute");
  EXPECT_EQ(r.set.flavor("spot")->tolerations.at(3).toleration_seconds, 60);
}

TEST(ObjectErrors, LocalQueueNeedsNamespaceAndClusterQueue) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: main
spec:
  clusterQueue: team-a
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team-b}
spec:
  stopPolicy: Hold
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec: {namespaceSelector: {}}
)");
  ASSERT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:3:1: metadata.namespace is missing: a LocalQueue belongs to a namespace");
  EXPECT_EQ(r.errors[1].str(),
            "p.yaml:11:1: spec.clusterQueue is missing: a LocalQueue names the ClusterQueue it "
            "feeds");
  EXPECT_EQ(r.set.local_queue("team-b", "main")->stop_policy, StopPolicy::kHold);
}

TEST(ObjectErrors, PriorityClassValueIsATopLevelInt32) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: a}
value: "100"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: b}
value: 3000000000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: c}
spec: {value: 1}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: d}
value: -5
description: batch
)");
  ASSERT_EQ(r.errors.size(), 3u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(), "p.yaml:4:8: value must be an integer, not the string \"100\"");
  EXPECT_EQ(r.errors[1].str(),
            "p.yaml:9:8: value: 3000000000 is out of range (-2147483648 to 2147483647)");
  EXPECT_EQ(r.errors[2].at.str(), "p.yaml:14:1");
  EXPECT_NE(r.errors[2].message.find("unknown field \"spec\""), std::string::npos);
  EXPECT_EQ(r.set.priority_class("d")->value, -5);
  EXPECT_EQ(r.set.priority_class("d")->description, "batch");
}

TEST(ObjectErrors, FieldWrittenTwice) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: a}
spec:
  clusterQueue: a
  clusterQueue: b
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec: {namespaceSelector: {}}
)");
  expect_error(r, "p.yaml:6:3", "spec.clusterQueue is written twice (first at p.yaml:5:3)");
  EXPECT_EQ(r.set.local_queue("a", "main")->cluster_queue, "a");
}

TEST(ObjectErrors, KnownButNotActedOnFieldsAreWarnings) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q, namespace: ignored, uid: abc}
spec:
  namespaceSelector: {}
  admissionChecks: [prov]
  flavorFungibility: {preference: BorrowingOverPreemption}
status:
  pendingWorkloads: 3
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.warnings.size(), 4u) << joined(r.warnings);
  EXPECT_EQ(r.warnings[0].str(),
            "p.yaml:3:21: metadata.namespace is ignored: a ClusterQueue is cluster-scoped");
  EXPECT_EQ(r.warnings[1].str(),
            "p.yaml:6:3: spec.admissionChecks is not acted on by gpuaas: gpuaas runs no admission "
            "checks");
  EXPECT_EQ(r.warnings[2].at.str(), "p.yaml:7:23");
  EXPECT_EQ(r.warnings[3].at.str(), "p.yaml:8:1");
}

}  // namespace
}  // namespace gpuaas::policy
