// Checks across the whole set: references resolve across files, names are defined once per kind,
// unwritten Cohorts are created implicitly, Cohort trees have no cycles, errors come in file
// order.
#include <gtest/gtest.h>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using testing::joined;

const char* kFlavors = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
)";

const char* kQueues = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 4}]
)";

const char* kLocalQueues = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team-b}
spec: {clusterQueue: team-b}
)";

TEST(SetValidation, ReferencesResolveAcrossFiles) {
  auto r = parse_policy_texts(
      {{"flavors.yaml", kFlavors}, {"queues.yaml", kQueues}, {"local.yaml", kLocalQueues}});
  // Only team-b is missing; team-a's flavor lives in another file and resolves.
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "local.yaml:9:22: LocalQueue \"team-b/main\" feeds ClusterQueue \"team-b\", which is "
            "not defined");
  EXPECT_EQ(r.set.files, (std::vector<std::string>{"flavors.yaml", "queues.yaml", "local.yaml"}));
  EXPECT_EQ(r.set.local_queue("team-a", "main")->cluster_queue, "team-a");
}

TEST(SetValidation, MissingFlavorWhenItsFileIsLeftOut) {
  auto r = parse_policy_texts({{"queues.yaml", kQueues}});
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "queues.yaml:10:13: ClusterQueue \"team-a\" names ResourceFlavor \"h100\", which is "
            "not defined");
}

TEST(SetValidation, DuplicatesPerKindAndLocalQueuesPerNamespace) {
  auto r = parse_policy_texts({{"a.yaml", kFlavors},
                               {"b.yaml", std::string(kFlavors) + "---\n" + kQueues},
                               {"c.yaml", std::string(kLocalQueues) + "---\n" + kLocalQueues}});
  // team-b/main is missing its ClusterQueue in both copies; the copy itself is a duplicate.
  std::vector<std::string> want = {
      "b.yaml:3:18: ResourceFlavor \"h100\" is defined twice (first at a.yaml:3:18)",
      "c.yaml:9:22: LocalQueue \"team-b/main\" feeds ClusterQueue \"team-b\", which is not "
      "defined",
      "c.yaml:13:18: LocalQueue \"team-a/main\" is defined twice (first at c.yaml:3:18)",
      "c.yaml:18:18: LocalQueue \"team-b/main\" is defined twice (first at c.yaml:8:18)",
  };
  EXPECT_EQ(testing::lines(r.errors), want);
  EXPECT_EQ(r.set.flavors.size(), 1u);
  EXPECT_EQ(r.set.local_queues.size(), 2u);  // main in team-a and in team-b: different queues
}

TEST(SetValidation, ImplicitCohortsAreAppendedInReferenceOrder) {
  auto r = parse_policy_texts(
      {{"f.yaml", kFlavors}, {"q.yaml", kQueues}, {"c.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: ml}
spec: {parentName: org}
)"}});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.cohorts.size(), 3u);
  EXPECT_EQ(r.set.cohorts[0].name, "ml");  // written ones first
  EXPECT_FALSE(r.set.cohorts[0].implicit);
  EXPECT_EQ(r.set.cohorts[1].name, "research");  // named by team-a (q.yaml)
  EXPECT_TRUE(r.set.cohorts[1].implicit);
  EXPECT_EQ(r.set.cohorts[1].at.str(), "q.yaml:5:15");
  EXPECT_EQ(r.set.cohorts[1].parent, "");
  EXPECT_EQ(r.set.cohorts[2].name, "org");  // named by ml's parentName
  EXPECT_TRUE(r.set.cohorts[2].implicit);
  EXPECT_EQ(r.set.cohort("org")->at.str(), "c.yaml:4:20");
}

TEST(SetValidation, CohortCyclesAreReportedOnce) {
  auto r = parse_policy_texts({{"c.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: a}
spec: {parentName: b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: b}
spec: {parentName: c}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: c}
spec: {parentName: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: leaf}
spec: {parentName: a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: self}
spec: {parent: self}
)"}});
  ASSERT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "c.yaml:4:20: Cohort parents form a cycle: a -> b -> c -> a (Kueue stops every "
            "ClusterQueue in a cycle)");
  EXPECT_EQ(r.errors[1].str(), "c.yaml:24:16: Cohort \"self\" names itself as its parent");
  EXPECT_EQ(r.set.cohort("self")->parent, "self");  // v1beta1's spec.parent spelling
}

TEST(SetValidation, ErrorsComeInFileOrder) {
  // The cross-file error in the first file is found last, but printed first.
  auto r = parse_policy_texts(
      {{"1.yaml", kLocalQueues}, {"2.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Job\n"}});
  ASSERT_EQ(r.errors.size(), 3u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.file, "1.yaml");
  EXPECT_EQ(r.errors[0].at.line, 4);
  EXPECT_EQ(r.errors[1].at.str(), "1.yaml:9:22");
  EXPECT_EQ(r.errors[2].at.str(), "2.yaml:2:7");
}

TEST(SetValidation, SyntaxErrorInOneFileDoesNotHideTheOthersNorCascade) {
  auto r = parse_policy_texts({{"broken.yaml", "kind: [ClusterQueue\n"},
                               {"local.yaml", kLocalQueues},
                               {"bad.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Nope\n"}});
  // local.yaml's queues may live in broken.yaml: no "not defined" errors.
  ASSERT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.file, "broken.yaml");
  EXPECT_EQ(r.errors[1].at.str(), "bad.yaml:2:7");
  EXPECT_EQ(r.set.local_queues.size(), 2u);
}

TEST(SetValidation, AtMostOneAdmissionPolicy) {
  auto r = parse_policy_texts({{"a.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
)"},
                               {"b.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata:
  name: other
spec:
  placement: {candidates: 4}
)"}});
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "b.yaml:4:9: AdmissionPolicy \"other\" is a second AdmissionPolicy; a policy set has "
            "one (\"default\" is at a.yaml:3:18)");
  EXPECT_EQ(r.set.admission.name, "default");
  EXPECT_EQ(r.set.admission.placement_candidates, 16);
}

TEST(SetValidation, AdmissionPolicyNamesMustResolve) {
  auto r = parse_policy_texts(
      {{"f.yaml", kFlavors}, {"q.yaml", kQueues}, {"p.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec:
  expectedDuration:
    byClusterQueue: {team-a: 30m, team-z: 1h}
    byLocalQueue: {"team-a/main": 45m, team-a: 1m}
)"}});
  ASSERT_EQ(r.errors.size(), 3u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:6:35: expectedDuration.byClusterQueue names ClusterQueue \"team-z\", which is "
            "not defined");
  EXPECT_EQ(r.errors[1].at.str(), "p.yaml:7:20");  // no LocalQueues were given
  EXPECT_EQ(r.errors[2].str(),
            "p.yaml:7:40: spec.expectedDuration.byLocalQueue: \"team-a\" is not "
            "\"namespace/name\" of a LocalQueue");
}

TEST(SetValidation, BindingByFlavorNamesMustResolve) {
  auto r = parse_policy_texts({{"f.yaml", kFlavors}, {"p.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec:
  placement:
    binding: preferred
    bindingByFlavor: {h100: required, h200: "off"}
)"}});
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            "p.yaml:7:39: placement.bindingByFlavor names ResourceFlavor \"h200\", which is not "
            "defined");
  EXPECT_EQ(r.set.admission.binding_by_flavor.at("h100"), Binding::kRequired);
}

TEST(SetValidation, BindingByFlavorIsNotCheckedWhenAFileIsMissing) {
  // h100 may be defined in the file that did not parse.
  auto r = parse_policy_texts(
      {{"broken.yaml", "kind: [ResourceFlavor\n"}, {"p.yaml", R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec: {placement: {bindingByFlavor: {h100: required}}}
)"}});
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].at.file, "broken.yaml");
}

}  // namespace
}  // namespace gpuaas::policy
