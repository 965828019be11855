// gpuaas.io/v1alpha1 AdmissionPolicy: every field read, Go-style durations, mistakes located.
#include <gtest/gtest.h>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using std::chrono::seconds;
using testing::joined;
using testing::load_text;

const char* kQueues = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: team-a}
---
)";

TEST(AdmissionPolicy, EveryFieldIsRead) {
  auto r = load_text(std::string(kQueues) + R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec:
  fairSharing: {enable: true}
  expectedDuration:
    default: 1h
    byKind: {PyTorchJob: 2h, RayJob: 1h30m}
    byClusterQueue: {team-a: 30m}
    byLocalQueue: {"team-a/main": 45m}
  preemption:
    protection: 10m   # minimum runtime before a workload may be preempted
    delay: 90s
  placement:
    candidates: 32
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  const auto& a = r.set.admission;
  EXPECT_EQ(a.name, "default");
  EXPECT_EQ(a.at.str(), "p.yaml:13:18");
  EXPECT_TRUE(a.fair_sharing);
  EXPECT_EQ(a.default_expected_duration, seconds(3600));
  EXPECT_EQ(a.expected_duration_by_kind.at("PyTorchJob"), seconds(7200));
  EXPECT_EQ(a.expected_duration_by_kind.at("RayJob"), seconds(5400));
  EXPECT_EQ(a.expected_duration_by_cluster_queue.at("team-a"), seconds(1800));
  EXPECT_EQ(a.expected_duration_by_local_queue.at("team-a/main"), seconds(2700));
  EXPECT_EQ(a.preemption_protection, seconds(600));
  EXPECT_EQ(a.preemption_delay, seconds(90));
  EXPECT_EQ(a.placement_candidates, 32);
}

TEST(AdmissionPolicy, DefaultsWhenSpecIsEmpty) {
  auto r =
      load_text("apiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata: {name: p}\n");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  const auto& a = r.set.admission;
  EXPECT_EQ(a.name, "p");
  EXPECT_FALSE(a.fair_sharing);
  EXPECT_EQ(a.default_expected_duration, seconds(0));
  EXPECT_TRUE(a.expected_duration_by_kind.empty());
  EXPECT_EQ(a.preemption_protection, seconds(0));
  EXPECT_EQ(a.preemption_delay, seconds(0));
  EXPECT_EQ(a.placement_candidates, 16);
}

TEST(AdmissionPolicy, MistakesAreLocated) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: p}
spec:
  fairSharing: {enable: "true", preemptionStrategies: [LessThanInitialShare]}
  expectedDuration:
    default: 1 hour
    byKind: {PyTorchJob: -5m}
  preemption:
    protektion: 10m
  placement: {candidates: 0}
  scaling: {}
)");
  std::vector<std::string> want = {
      "p.yaml:5:25: spec.fairSharing.enable: \"true\" is not true or false",
      "p.yaml:7:14: spec.expectedDuration.default: \"1 hour\" is not a duration (like 90s, 5m or "
      "1h30m; whole seconds, not negative)",
      "p.yaml:8:26: spec.expectedDuration.byKind.PyTorchJob: \"-5m\" is not a duration (like 90s, "
      "5m or 1h30m; whole seconds, not negative)",
      "p.yaml:10:5: unknown field \"protektion\" in spec.preemption; did you mean \"protection\"?",
      "p.yaml:11:27: spec.placement.candidates: 0 is out of range (1 to 4096)",
      "p.yaml:12:3: unknown field \"scaling\" in spec (known fields: fairSharing, "
      "expectedDuration, preemption, placement, deadlines)",
  };
  EXPECT_EQ(testing::lines(r.errors), want);
  ASSERT_EQ(r.warnings.size(), 1u) << joined(r.warnings);
  EXPECT_EQ(r.warnings[0].at.str(), "p.yaml:5:33");
}

TEST(AdmissionPolicy, PlacementBindingIsRead) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: l4}
---
apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec:
  placement:
    binding: required
    bindingByFlavor: {l4: preferred, h100: "off"}
    bindTimeout: 5m
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  const auto& a = r.set.admission;
  EXPECT_EQ(a.binding, Binding::kRequired);
  EXPECT_EQ(a.binding_by_flavor.at("l4"), Binding::kPreferred);
  EXPECT_EQ(a.binding_by_flavor.at("h100"), Binding::kOff);
  EXPECT_EQ(a.bind_timeout, seconds(300));
}

TEST(AdmissionPolicy, PlacementBindingDefaultsToTheKinds) {
  auto r =
      load_text("apiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata: {name: p}\n");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_EQ(r.set.admission.binding, Binding::kKindDefault);
  EXPECT_TRUE(r.set.admission.binding_by_flavor.empty());
  EXPECT_EQ(r.set.admission.bind_timeout, seconds(120));
}

TEST(AdmissionPolicy, PlacementBindingMistakesAreLocated) {
  auto r = load_text(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: p}
spec:
  placement:
    binding: always
    bindingByFlavor: {h100: strict}
    bindTimeout: 0s
)");
  std::vector<std::string> want = {
      "p.yaml:10:14: spec.placement.binding: \"always\" is not one of required, preferred or off",
      "p.yaml:11:29: spec.placement.bindingByFlavor.h100: \"strict\" is not one of required, "
      "preferred or off",
      "p.yaml:12:18: spec.placement.bindTimeout: must be longer than 0s",
  };
  EXPECT_EQ(testing::lines(r.errors), want);
  EXPECT_EQ(r.set.admission.binding, Binding::kKindDefault);
  EXPECT_TRUE(r.set.admission.binding_by_flavor.empty());
}

TEST(Duration, GoSyntax) {
  EXPECT_EQ(parse_duration("90s"), seconds(90));
  EXPECT_EQ(parse_duration("5m"), seconds(300));
  EXPECT_EQ(parse_duration("1h30m"), seconds(5400));
  EXPECT_EQ(parse_duration("2h"), seconds(7200));
  EXPECT_EQ(parse_duration("1.5h"), seconds(5400));
  EXPECT_EQ(parse_duration(".5m"), seconds(30));
  EXPECT_EQ(parse_duration("1h0m5s"), seconds(3605));
  EXPECT_EQ(parse_duration("1500ms"), std::nullopt);  // not whole seconds
  EXPECT_EQ(parse_duration("2000ms"), seconds(2));
  EXPECT_EQ(parse_duration("0"), seconds(0));
  EXPECT_EQ(parse_duration("+10s"), seconds(10));
  for (const char* bad : {"", "10", "h", "1d", "-5m", "1 h", "1h 30m", ".s", "99999999999999h"}) {
    EXPECT_EQ(parse_duration(bad), std::nullopt) << bad;
  }
}

TEST(Duration, FormatsBack) {
  EXPECT_EQ(format_duration(seconds(0)), "0s");
  EXPECT_EQ(format_duration(seconds(45)), "45s");
  EXPECT_EQ(format_duration(seconds(5400)), "1h30m");
  EXPECT_EQ(format_duration(seconds(7200)), "2h");
  EXPECT_EQ(format_duration(seconds(3605)), "1h5s");
  EXPECT_EQ(parse_duration(format_duration(seconds(3605))), seconds(3605));
}

}  // namespace
}  // namespace gpuaas::policy
