// gpuaas.io/v1alpha1 IdleReclaimPolicy and NotebookPolicy: every field read, defaults,
// metric ranges, mistakes located, selectors resolved against the set's ClusterQueues.
#include <algorithm>

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
)";

TEST(IdleReclaimPolicy, EveryFieldIsRead) {
  auto r = load_text(std::string(kQueues) + R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: serving}
spec:
  selector:
    kinds: [RayCluster, InferenceService]
    namespaces: [team-a]
    clusterQueues: [team-a]
    matchLabels: {tier: dev}
  idle:
    window: 15m
    thresholds:
    - {metric: DCGM_FI_DEV_GPU_UTIL, below: 3}
    - {metric: DCGM_FI_PROF_GR_ENGINE_ACTIVE, below: 0.05}
    - {metric: DCGM_FI_PROF_SM_ACTIVE, below: 0.1}
    requests: false
    kernelActivity: false
    missingData: Idle
    learnArrivals: true
    coldStartCost: 45s
  action: Suspend
  keepQuotaFor: 1h
  gracePeriod: 45s
  minRuntime: 20m
  stabilizationWindow: 2m
  cooldown: 10m
  minTimeAtZero: 5m
  optOutAnnotation: example.com/keep-warm
  lendIdleQuota: false
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  ASSERT_EQ(r.set.idle_reclaim_policies.size(), 1u);
  const auto& p = r.set.idle_reclaim_policies[0];
  EXPECT_EQ(p.name, "serving");
  EXPECT_EQ(p.at.str(), "p.yaml:8:18");
  EXPECT_EQ(p.selector.kinds, (std::vector<std::string>{"RayCluster", "InferenceService"}));
  EXPECT_EQ(p.selector.namespaces, std::vector<std::string>{"team-a"});
  EXPECT_EQ(p.selector.cluster_queues, std::vector<std::string>{"team-a"});
  EXPECT_EQ(p.selector.match_labels, (LabelMap{{"tier", "dev"}}));
  EXPECT_EQ(p.idle_window, seconds(900));
  ASSERT_EQ(p.thresholds.size(), 3u);
  EXPECT_EQ(p.thresholds[0].metric, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_DOUBLE_EQ(p.thresholds[0].below, 3);
  EXPECT_EQ(p.thresholds[0].at.str(), "p.yaml:18:16");
  EXPECT_EQ(p.thresholds[1].metric, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
  EXPECT_DOUBLE_EQ(p.thresholds[1].below, 0.05);
  EXPECT_DOUBLE_EQ(p.thresholds[2].below, 0.1);
  EXPECT_TRUE(p.thresholds[2].known);
  EXPECT_FALSE(p.requests_are_activity);
  EXPECT_FALSE(p.kernel_activity);
  EXPECT_EQ(p.missing_data, MissingData::kIdle);
  EXPECT_TRUE(p.learn_arrivals);
  EXPECT_EQ(p.cold_start_cost, seconds(45));
  EXPECT_EQ(p.action, IdleAction::kSuspend);
  EXPECT_EQ(p.keep_quota_for, seconds(3600));
  EXPECT_EQ(p.grace_period, seconds(45));
  EXPECT_EQ(p.min_runtime, seconds(1200));
  EXPECT_EQ(p.stabilization_window, seconds(120));
  EXPECT_EQ(p.cooldown, seconds(600));
  EXPECT_EQ(p.min_time_at_zero, seconds(300));
  EXPECT_EQ(p.opt_out_annotation, "example.com/keep-warm");
  EXPECT_EQ(p.opt_out_value, "false");
  EXPECT_FALSE(p.lend_idle_quota);
  EXPECT_STREQ(to_string(p.action), "Suspend");
  EXPECT_STREQ(to_string(p.missing_data), "Idle");
}

TEST(IdleReclaimPolicy, Defaults) {
  auto r =
      load_text("apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: p}\n");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.idle_reclaim_policies.size(), 1u);
  const auto& p = r.set.idle_reclaim_policies[0];
  EXPECT_TRUE(p.selector.kinds.empty());
  EXPECT_TRUE(p.selector.namespaces.empty());
  EXPECT_TRUE(p.selector.cluster_queues.empty());
  EXPECT_TRUE(p.selector.match_labels.empty());
  EXPECT_EQ(p.idle_window, seconds(600));
  ASSERT_EQ(p.thresholds.size(), 1u);
  EXPECT_EQ(p.thresholds[0].metric, kMetricGpuUtil);
  EXPECT_DOUBLE_EQ(p.thresholds[0].below, 5);
  EXPECT_TRUE(p.requests_are_activity);
  EXPECT_TRUE(p.kernel_activity);
  EXPECT_EQ(p.missing_data, MissingData::kNotIdle);
  EXPECT_FALSE(p.learn_arrivals);
  EXPECT_EQ(p.cold_start_cost, seconds(20));
  EXPECT_EQ(p.action, IdleAction::kScaleToZero);
  EXPECT_EQ(p.keep_quota_for, seconds(1800));
  EXPECT_EQ(p.grace_period, seconds(30));
  EXPECT_EQ(p.min_runtime, seconds(0));
  EXPECT_EQ(p.stabilization_window, seconds(60));
  EXPECT_EQ(p.cooldown, seconds(300));
  EXPECT_EQ(p.min_time_at_zero, seconds(0));
  EXPECT_EQ(p.opt_out_annotation, "gpuaas.io/idle-reclaim");
  EXPECT_EQ(p.opt_out_value, "false");
  EXPECT_TRUE(p.lend_idle_quota);
  EXPECT_TRUE(r.set.notebook_policies.empty());
}

TEST(IdleReclaimPolicy, OptOutAnnotationWithValue) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: p}
spec:
  keepQuotaFor: 0
  optOutAnnotation: {example.com/reclaim: "never"}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  const auto& p = r.set.idle_reclaim_policies.at(0);
  EXPECT_EQ(p.keep_quota_for, seconds(0));
  EXPECT_EQ(p.opt_out_annotation, "example.com/reclaim");
  EXPECT_EQ(p.opt_out_value, "never");
}

TEST(IdleReclaimPolicy, UnknownMetricIsAWarning) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: p}
spec:
  idle:
    thresholds:
    - {metric: DCGM_FI_DEV_MEM_COPY_UTIL, below: 250}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  std::vector<std::string> want = {
      "p.yaml:7:16: spec.idle.thresholds[0].metric: \"DCGM_FI_DEV_MEM_COPY_UTIL\" is not "
      "a metric gpuaas knows; its value is compared as given"};
  EXPECT_EQ(testing::lines(r.warnings), want);
  const auto& p = r.set.idle_reclaim_policies.at(0);
  ASSERT_EQ(p.thresholds.size(), 1u);
  EXPECT_FALSE(p.thresholds[0].known);
  EXPECT_DOUBLE_EQ(p.thresholds[0].below, 250);
}

TEST(IdleReclaimPolicy, MistakesAreLocated) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: p}
spec:
  selector:
    namespaces: [Team_A, team-b, team-b]
    matchLabel: {a: b}
  idle:
    window: 10 minutes
    thresholds:
    - {metric: DCGM_FI_PROF_GR_ENGINE_ACTIVE, below: 5}
    - {metric: DCGM_FI_DEV_GPU_UTIL, below: 101}
    - {metric: DCGM_FI_PROF_SM_ACTIVE, below: "0.1"}
    - {metric: DCGM_FI_PROF_SM_ACTIVE}
    missingData: Unknown
  action: Delete
  keepQuota: 30m
  optOutAnnotation: "not a key"
  lendIdleQuota: yes
)");
  std::vector<std::string> want = {
      "p.yaml:6:18: spec.selector.namespaces: \"Team_A\" is not a namespace name (a DNS-1123 "
      "label)",
      "p.yaml:6:34: spec.selector.namespaces[2]: \"team-b\" is listed twice (first at "
      "p.yaml:6:26)",
      "p.yaml:7:5: unknown field \"matchLabel\" in spec.selector; did you mean \"matchLabels\"?",
      "p.yaml:9:13: spec.idle.window: \"10 minutes\" is not a duration (like 90s, 5m or 1h30m; "
      "whole seconds, not negative)",
      "p.yaml:11:54: spec.idle.thresholds[0].below: 5 is out of range; "
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE is a 0–1 ratio (0.05 means 5%), not a percentage",
      "p.yaml:12:45: spec.idle.thresholds[1].below: 101 is out of range; DCGM_FI_DEV_GPU_UTIL is "
      "a percentage (0 to 100)",
      "p.yaml:13:47: spec.idle.thresholds[2].below must be a number, not the string \"0.1\"",
      "p.yaml:14:7: spec.idle.thresholds[3].below is required",
      "p.yaml:15:18: spec.idle.missingData: \"Unknown\" is not one of NotIdle or Idle",
      "p.yaml:16:11: spec.action: \"Delete\" is not one of ScaleToZero, Suspend or Stop",
      "p.yaml:17:3: unknown field \"keepQuota\" in spec (known fields: selector, idle, action, "
      "keepQuotaFor, gracePeriod, minRuntime, stabilizationWindow, cooldown, minTimeAtZero, "
      "optOutAnnotation, lendIdleQuota)",
      "p.yaml:18:21: spec.optOutAnnotation: \"not a key\" is not an annotation key (like "
      "gpuaas.io/idle-reclaim)",
      "p.yaml:19:18: spec.lendIdleQuota: \"yes\" is not true or false",
  };
  EXPECT_EQ(testing::lines(r.errors), want);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
}

TEST(IdleReclaimPolicy, EmptyAndRepeatedThresholds) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: a}
spec:
  idle: {thresholds: []}
---
apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: b}
spec:
  idle:
    thresholds:
    - {metric: DCGM_FI_DEV_GPU_UTIL, below: 5}
    - {metric: DCGM_FI_DEV_GPU_UTIL, below: 10}
)");
  std::vector<std::string> want = {
      "p.yaml:5:22: spec.idle.thresholds is empty; leave it out for the default "
      "(DCGM_FI_DEV_GPU_UTIL below 5)",
      "p.yaml:14:16: spec.idle.thresholds[1].metric: \"DCGM_FI_DEV_GPU_UTIL\" has a threshold "
      "already (at p.yaml:13:16)",
  };
  EXPECT_EQ(testing::lines(r.errors), want);
}

TEST(IdleReclaimPolicy, ClusterQueuesMustExistAndNamesAreUnique) {
  auto r = load_text(std::string(kQueues) + R"(apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: p}
spec:
  selector: {clusterQueues: [team-a, team-z]}
---
apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: p}
---
apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: q}
---
apiVersion: gpuaas.io/v1alpha1
kind: NotebookPolicy
metadata: {name: p}
spec:
  selector: {clusterQueues: [team-y]}
)");
  std::vector<std::string> want = {
      "p.yaml:10:38: IdleReclaimPolicy \"p\": selector.clusterQueues names ClusterQueue "
      "\"team-z\", which is not defined",
      "p.yaml:14:18: IdleReclaimPolicy \"p\" is defined twice (first at p.yaml:8:18)",
      "p.yaml:24:30: NotebookPolicy \"p\": selector.clusterQueues names ClusterQueue \"team-y\", "
      "which is not defined",
  };
  auto got = testing::lines(r.errors);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(r.set.idle_reclaim_policies.size(), 2u);
  EXPECT_EQ(r.set.notebook_policies.size(), 1u);
}

TEST(NotebookPolicy, EveryFieldIsRead) {
  auto r = load_text(std::string(kQueues) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NotebookPolicy
metadata: {name: notebooks}
spec:
  selector:
    namespaces: [team-a]
    clusterQueues: [team-a]
    matchLabels: {tier: dev}
  gate: false
  maxWait: 15m
  culling:
    enabled: true
    idleTime: 2h
    gpuThreshold: 2.5
    action: ScaleToZero
    keepQuotaFor: 10m
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  ASSERT_EQ(r.set.notebook_policies.size(), 1u);
  const auto& p = r.set.notebook_policies[0];
  EXPECT_EQ(p.name, "notebooks");
  EXPECT_EQ(p.at.str(), "p.yaml:8:18");
  EXPECT_TRUE(p.selector.kinds.empty());  // the kinds plugins declare sessions
  EXPECT_EQ(p.selector.namespaces, std::vector<std::string>{"team-a"});
  EXPECT_EQ(p.selector.cluster_queues, std::vector<std::string>{"team-a"});
  EXPECT_EQ(p.selector.match_labels, (LabelMap{{"tier", "dev"}}));
  EXPECT_FALSE(p.gate);
  EXPECT_EQ(p.max_wait, seconds(900));
  EXPECT_TRUE(p.culling.enabled);
  EXPECT_EQ(p.culling.idle_time, seconds(7200));
  EXPECT_DOUBLE_EQ(p.culling.gpu_threshold, 2.5);
  EXPECT_EQ(p.culling.action, IdleAction::kScaleToZero);
  EXPECT_EQ(p.culling.keep_quota_for, seconds(600));
}

TEST(NotebookPolicy, Defaults) {
  auto r = load_text("apiVersion: gpuaas.io/v1alpha1\nkind: NotebookPolicy\nmetadata: {name: p}\n");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.notebook_policies.size(), 1u);
  const auto& p = r.set.notebook_policies[0];
  EXPECT_TRUE(p.selector.kinds.empty());  // the kinds plugins declare sessions
  EXPECT_TRUE(p.gate);
  EXPECT_EQ(p.max_wait, seconds(0));
  EXPECT_FALSE(p.culling.enabled);
  EXPECT_EQ(p.culling.idle_time, seconds(3600));
  EXPECT_DOUBLE_EQ(p.culling.gpu_threshold, 5);
  EXPECT_EQ(p.culling.action, IdleAction::kStop);
  EXPECT_EQ(p.culling.keep_quota_for, seconds(0));
}

TEST(NotebookPolicy, MistakesAreLocated) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: NotebookPolicy
metadata: {name: p}
spec:
  selector: {kinds: [RayCluster]}
  gate: 1
  culling:
    enabled: true
    gpuThreshold: 150
    action: Suspend
    idleTim: 1h
)");
  std::vector<std::string> want = {
      "p.yaml:5:14: spec.selector.kinds: a NotebookPolicy selects sessions only (the kinds "
      "plugins declare so, e.g. Notebook); leave kinds out (an IdleReclaimPolicy selects other "
      "kinds)",
      "p.yaml:6:9: spec.gate: \"1\" is not true or false",
      "p.yaml:9:19: spec.culling.gpuThreshold: 150 is out of range; a percentage of GPU "
      "utilization (0 to 100)",
      "p.yaml:10:13: spec.culling.action: \"Suspend\" is not one of Stop or ScaleToZero",
      "p.yaml:11:5: unknown field \"idleTim\" in spec.culling; did you mean \"idleTime\"?",
  };
  auto got = testing::lines(r.errors);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(NotebookPolicy, UnknownGpuaasKindListsTheKinds) {
  auto r = load_text("apiVersion: gpuaas.io/v1alpha1\nkind: IdlePolicy\nmetadata: {name: p}\n");
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_NE(r.errors[0].message.find("AdmissionPolicy, IdleReclaimPolicy, NotebookPolicy"),
            std::string::npos)
      << r.errors[0].message;
}

}  // namespace
}  // namespace gpuaas::policy
