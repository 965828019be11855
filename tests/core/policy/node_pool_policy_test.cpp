// gpuaas.io/v1alpha1 NodePool: every field read, defaults per scale-target kind,
// mistakes located, flavors resolved against the set and one pool per flavor.
#include <algorithm>

#include <gtest/gtest.h>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using std::chrono::seconds;
using testing::joined;
using testing::load_text;

// Two flavors; the next document starts on line 9.
const char* kFlavors = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
)";

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(NodePool, EveryFieldIsRead) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100-pool}
spec:
  flavor: h100
  gpusPerNode: 4
  minNodes: 1
  maxNodes: 16
  provisioningTime: 12m
  pricePerNodeHour: 98.32
  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
  scaleTarget:
    kind: ProvisioningRequest
    apiVersion: autoscaling.x-k8s.io/v1beta1
    namespace: capi-system
    name: h100-req
    podTemplate: h100-node
    provisioningClassName: check-capacity.autoscaling.x-k8s.io
  scaleOut:
    maxSurge: 4
    forecast: false
    forecastWindow: 1h
    maxNodeProvisionTime: 20m
    backoff: 2m
    maxBackoff: 1h
  scaleIn:
    enable: false
    unneededTime: 5m
    delayAfterAdd: 0
    preemptibleBelowPriority: -100
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  ASSERT_EQ(r.set.node_pools.size(), 1u);
  const auto& p = r.set.node_pools[0];
  EXPECT_EQ(p.name, "h100-pool");
  EXPECT_EQ(p.at.str(), "p.yaml:11:18");
  EXPECT_EQ(p.flavor, "h100");
  EXPECT_EQ(p.gpus_per_node, 4);
  EXPECT_EQ(p.min_nodes, 1);
  EXPECT_EQ(p.max_nodes, 16);
  EXPECT_EQ(p.provisioning_time, seconds(720));
  EXPECT_DOUBLE_EQ(p.price_per_node_hour, 98.32);
  EXPECT_EQ(p.node_selector, (LabelMap{{"node.kubernetes.io/instance-type", "p5.48xlarge"}}));
  EXPECT_EQ(p.target.kind, ScaleTargetKind::kProvisioningRequest);
  EXPECT_STREQ(to_string(p.target.kind), "ProvisioningRequest");
  EXPECT_EQ(p.target.api_version, "autoscaling.x-k8s.io/v1beta1");
  EXPECT_EQ(p.target.namespace_, "capi-system");
  EXPECT_EQ(p.target.name, "h100-req");
  EXPECT_EQ(p.target.pod_template, "h100-node");
  EXPECT_EQ(p.target.provisioning_class, "check-capacity.autoscaling.x-k8s.io");
  EXPECT_EQ(p.target.at.str(), "p.yaml:20:3");
  EXPECT_EQ(p.max_surge, 4);
  EXPECT_FALSE(p.forecast);
  EXPECT_EQ(p.forecast_window, seconds(3600));
  EXPECT_EQ(p.max_node_provision_time, seconds(1200));
  EXPECT_EQ(p.backoff, seconds(120));
  EXPECT_EQ(p.max_backoff, seconds(3600));
  EXPECT_FALSE(p.scale_in);
  EXPECT_EQ(p.scale_down_unneeded_time, seconds(300));
  EXPECT_EQ(p.scale_down_delay_after_add, seconds(0));
  ASSERT_TRUE(p.preemptible_below_priority.has_value());
  EXPECT_EQ(*p.preemptible_below_priority, -100);
}

TEST(NodePool, Defaults) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec: {flavor: h100, maxNodes: 8}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  ASSERT_EQ(r.set.node_pools.size(), 1u);
  const auto& p = r.set.node_pools[0];
  EXPECT_EQ(p.gpus_per_node, 8);
  EXPECT_EQ(p.min_nodes, 0);
  EXPECT_EQ(p.max_nodes, 8);
  EXPECT_EQ(p.provisioning_time, seconds(600));
  EXPECT_DOUBLE_EQ(p.price_per_node_hour, 0);
  EXPECT_EQ(p.node_selector, (LabelMap{{"gpuaas.io/node-pool", "h100"}}));
  EXPECT_EQ(p.target.kind, ScaleTargetKind::kAction);
  EXPECT_STREQ(to_string(p.target.kind), "Action");
  EXPECT_EQ(p.target.api_version, "gpuaas.io/v1alpha1");
  EXPECT_EQ(p.target.name, "h100");
  EXPECT_TRUE(p.target.namespace_.empty());
  EXPECT_TRUE(p.target.pod_template.empty());
  EXPECT_EQ(p.target.provisioning_class, "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
  EXPECT_EQ(p.target.at.str(), p.at.str());
  EXPECT_EQ(p.max_surge, 0);
  EXPECT_TRUE(p.forecast);
  EXPECT_EQ(p.forecast_window, seconds(1800));
  EXPECT_EQ(p.max_node_provision_time, seconds(900));
  EXPECT_EQ(p.backoff, seconds(300));
  EXPECT_EQ(p.max_backoff, seconds(1800));
  EXPECT_TRUE(p.scale_in);
  EXPECT_EQ(p.scale_down_unneeded_time, seconds(600));
  EXPECT_EQ(p.scale_down_delay_after_add, seconds(600));
  EXPECT_FALSE(p.preemptible_below_priority.has_value());
}

TEST(NodePool, TargetDefaultsPerKind) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  flavor: h100
  maxNodes: 8
  scaleTarget: {kind: MachineSet, namespace: capi-system, name: gpu-h100-md-0}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec:
  flavor: a100
  maxNodes: 4
  scaleTarget: {kind: ProvisioningRequest, namespace: batch, podTemplate: a100-node}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.node_pools.size(), 2u);
  const auto& ms = r.set.node_pools[0].target;
  EXPECT_EQ(ms.kind, ScaleTargetKind::kMachineSet);
  EXPECT_STREQ(to_string(ms.kind), "MachineSet");
  EXPECT_EQ(ms.api_version, "cluster.x-k8s.io/v1beta1");
  EXPECT_EQ(ms.namespace_, "capi-system");
  EXPECT_EQ(ms.name, "gpu-h100-md-0");
  EXPECT_EQ(ms.at.str(), "p.yaml:15:3");
  const auto& pr = r.set.node_pools[1].target;
  EXPECT_EQ(pr.kind, ScaleTargetKind::kProvisioningRequest);
  EXPECT_EQ(pr.api_version, "autoscaling.x-k8s.io/v1");
  EXPECT_EQ(pr.namespace_, "batch");
  EXPECT_EQ(pr.name, "a100");  // the requests' name prefix
  EXPECT_EQ(pr.pod_template, "a100-node");
  EXPECT_EQ(pr.provisioning_class, "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
}

TEST(NodePool, UnknownFieldsAreErrors) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  flavor: h100
  maxNode: 8
  scaleOut: {surge: 2}
  scaleIn: {enabled: false}
  scaleTarget: {kind: Action, replicas: 3}
)");
  std::vector<std::string> want = {
      "p.yaml:14:3: unknown field \"maxNode\" in spec; did you mean \"maxNodes\"?",
      "p.yaml:15:14: unknown field \"surge\" in spec.scaleOut (known fields: maxSurge, forecast, "
      "forecastWindow, maxNodeProvisionTime, backoff, maxBackoff)",
      "p.yaml:16:13: unknown field \"enabled\" in spec.scaleIn; did you mean \"enable\"?",
      "p.yaml:17:31: unknown field \"replicas\" in spec.scaleTarget (known fields: kind, "
      "apiVersion, namespace, name, podTemplate, provisioningClassName)",
  };
  EXPECT_EQ(sorted(testing::lines(r.errors)), sorted(want));
}

TEST(NodePool, RequiredFields) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: a}
spec:
  maxNodes: 8
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: b}
spec:
  flavor: h100
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: c}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
spec: {flavor: a100, maxNodes: 2}
)");
  std::vector<std::string> want = {
      "p.yaml:12:1: spec.flavor is missing: a NodePool names the ResourceFlavor of its nodes",
      "p.yaml:18:1: spec.maxNodes is missing: a NodePool says how many nodes it may have at most "
      "(up to 10000)",
      "p.yaml:23:18: NodePool has no spec: it needs at least spec.flavor and spec.maxNodes",
      "p.yaml:25:1: NodePool has no metadata.name",
  };
  EXPECT_EQ(sorted(testing::lines(r.errors)), sorted(want));
}

TEST(NodePool, MistakesAreLocated) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: a}
spec:
  flavor: h100
  gpusPerNode: 0
  minNodes: 4
  maxNodes: 2
  provisioningTime: 20m
  pricePerNodeHour: "98.32"
  nodeSelector: {}
  scaleTarget: {kind: Autoscaler}
  scaleOut:
    maxNodeProvisionTime: 15m
    backoff: 10m
    maxBackoff: 5m
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: b}
spec:
  flavor: a100
  maxNodes: 20000
  provisioningTime: 0
  pricePerNodeHour: -1
  scaleTarget:
    kind: MachineSet
    podTemplate: h100-node
    provisioningClassName: x
)");
  std::vector<std::string> want = {
      "p.yaml:14:16: spec.gpusPerNode: 0 is out of range (1 to 64)",
      "p.yaml:16:13: spec.maxNodes: 2 is below spec.minNodes (4)",
      "p.yaml:18:21: spec.pricePerNodeHour must be a number, not the string \"98.32\"",
      "p.yaml:19:17: spec.nodeSelector is empty: it would select every node; leave it out for "
      "the default {gpuaas.io/node-pool: a}",
      "p.yaml:20:23: spec.scaleTarget.kind: \"Autoscaler\" is not one of Action, MachineSet or "
      "ProvisioningRequest",
      "p.yaml:22:27: spec.scaleOut.maxNodeProvisionTime: 15m is shorter than "
      "spec.provisioningTime (20m): nodes would be given up on before they are expected to be "
      "Ready",
      "p.yaml:24:17: spec.scaleOut.maxBackoff: 5m is shorter than spec.scaleOut.backoff (10m)",
      "p.yaml:31:13: spec.maxNodes: 20000 is out of range (0 to 10000)",
      "p.yaml:32:21: spec.provisioningTime must be longer than 0",
      "p.yaml:33:21: spec.pricePerNodeHour: -1 is below 0",
      "p.yaml:34:3: spec.scaleTarget.namespace is missing: a MachineSet target names the "
      "MachineSet's namespace",
      "p.yaml:34:3: spec.scaleTarget.name is missing: a MachineSet target names the MachineSet "
      "to scale",
      "p.yaml:36:5: spec.scaleTarget.podTemplate: a MachineSet scale target takes no podTemplate "
      "(only a ProvisioningRequest target takes one)",
      "p.yaml:37:5: spec.scaleTarget.provisioningClassName: a MachineSet scale target takes no "
      "provisioningClassName (only a ProvisioningRequest target takes one)",
  };
  EXPECT_EQ(sorted(testing::lines(r.errors)), sorted(want));
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
}

TEST(NodePool, TargetFieldsPerKind) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: a}
spec:
  flavor: h100
  maxNodes: 2
  scaleTarget: {namespace: capi-system, podTemplate: t}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: b}
spec:
  flavor: a100
  maxNodes: 2
  scaleTarget: {kind: ProvisioningRequest, namespace: Batch_1}
)");
  std::vector<std::string> want = {
      "p.yaml:15:17: spec.scaleTarget.namespace: an Action scale target takes no namespace (the "
      "action names the cluster-scoped NodePool itself)",
      "p.yaml:15:41: spec.scaleTarget.podTemplate: an Action scale target takes no podTemplate "
      "(only a ProvisioningRequest target takes one)",
      "p.yaml:23:55: spec.scaleTarget.namespace: \"Batch_1\" is not a namespace name (a DNS-1123 "
      "label)",
      "p.yaml:23:3: spec.scaleTarget.podTemplate is missing: a ProvisioningRequest target names "
      "the PodTemplate of one node's worth of pods",
  };
  EXPECT_EQ(sorted(testing::lines(r.errors)), sorted(want));
}

TEST(NodePool, DefaultMaxNodeProvisionTimeBelowProvisioningTime) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: a}
spec: {flavor: h100, maxNodes: 2, provisioningTime: 20m}
)");
  std::vector<std::string> want = {
      "p.yaml:12:53: spec.provisioningTime: 20m is longer than "
      "spec.scaleOut.maxNodeProvisionTime (default 15m); raise maxNodeProvisionTime to at least "
      "provisioningTime",
  };
  EXPECT_EQ(testing::lines(r.errors), want);
}

TEST(NodePool, NamesAndFlavorsAreCheckedAcrossTheSet) {
  auto r = load_text(std::string(kFlavors) + R"(apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec: {flavor: h100, maxNodes: 8}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec: {flavor: a100, maxNodes: 8}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100-spot}
spec: {flavor: h100, maxNodes: 4}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: l4}
spec: {flavor: l4, maxNodes: 4}
)");
  std::vector<std::string> want = {
      "p.yaml:16:18: NodePool \"h100\" is defined twice (first at p.yaml:11:18)",
      "p.yaml:22:16: NodePool \"h100-spot\": ResourceFlavor \"h100\" has a NodePool already "
      "(\"h100\" at p.yaml:11:18); a flavor has at most one",
      "p.yaml:27:16: NodePool \"l4\" names ResourceFlavor \"l4\", which is not defined",
  };
  EXPECT_EQ(sorted(testing::lines(r.errors)), sorted(want));
  ASSERT_EQ(r.set.node_pools.size(), 2u);
  EXPECT_EQ(r.set.node_pools[0].name, "h100");
  EXPECT_EQ(r.set.node_pools[0].flavor, "h100");
  EXPECT_EQ(r.set.node_pools[1].name, "l4");
}

TEST(NodePool, UnknownGpuaasKindListsNodePool) {
  auto r = load_text("apiVersion: gpuaas.io/v1alpha1\nkind: NodePools\nmetadata: {name: p}\n");
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_NE(r.errors[0].message.find("NotebookPolicy, NodePool, CostModel, ServiceObjective)"), std::string::npos)
      << r.errors[0].message;
}

}  // namespace
}  // namespace gpuaas::policy
