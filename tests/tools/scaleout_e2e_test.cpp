// Node scale-out and scale-in as a platform team meets them: gpuaasd with a NodePool backed by a
// Cluster API MachineSet, on a real nats-server, everything through gpuaasctl. A job no node can
// place makes the MachineSet grow by one; once the new node is Ready it runs there; when it is
// deleted the empty node is cordoned, its Machine is marked for deletion and the MachineSet
// shrinks, while the node running other work is left alone. The scan interval (10 s of event
// time, cluster-autoscaler's) sets the pace: each test takes about half a minute.
#include <gtest/gtest.h>

#include "daemon_e2e.hpp"

namespace gpuaas::testing {
namespace {

constexpr const char* kPolicy = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 512Gi}
      - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: research}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  flavor: h100
  gpusPerNode: 8
  minNodes: 1
  maxNodes: 3
  provisioningTime: 5m
  pricePerNodeHour: 98.32
  scaleTarget: {kind: MachineSet, namespace: capi-system, name: gpu-h100-md-0}
  scaleOut: {forecast: false}
  scaleIn: {unneededTime: 2s, delayAfterAdd: 0s}
)";

// A node of the pool, as Cluster API and the GPU operator label and annotate it.
std::string node(const std::string& name, const std::string& machine) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {kubernetes.io/hostname: " + name +
         ", nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, gpuaas.io/node-pool: h100}\n"
         "  annotations: {cluster.x-k8s.io/machine: " +
         machine +
         ", cluster.x-k8s.io/cluster-namespace: capi-system}\n"
         "status:\n  capacity: {cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \"8\"}\n"
         "  allocatable: {cpu: \"94\", memory: 1000Gi, nvidia.com/gpu: \"8\"}\n"
         "  conditions:\n  - {type: Ready, status: \"True\"}\n";
}

std::string job(const std::string& name) {
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: main}\n"
         "spec:\n  runPolicy: {suspend: true}\n  pytorchReplicaSpecs:\n    Master:\n"
         "      replicas: 1\n      template:\n        spec:\n          containers:\n"
         "          - name: pytorch\n            image: example/train:1\n"
         "            resources:\n              limits: {nvidia.com/gpu: \"8\", cpu: \"8\", "
         "memory: 64Gi}\n";
}

class ScaleOutEndToEnd : public DaemonEndToEnd {
 protected:
  ScaleOutEndToEnd() : DaemonEndToEnd("sco") {}
  json pool() {
    auto st = json::parse(ctl("state --json").out, nullptr, false);
    if (!st.is_object() || !st["node_pools"].is_array() || st["node_pools"].empty()) return {};
    return st["node_pools"][0];
  }
};

TEST_F(ScaleOutEndToEnd, BacklogGrowsTheMachineSetAndAnEmptyNodeIsRemovedByName) {
  start_daemon(kPolicy);
  ASSERT_EQ(apply("node-a.yaml", node("h100-a", "gpu-h100-md-0-aaaaa")), 0);
  ASSERT_EQ(apply("big.yaml", job("big")), 0);
  ASSERT_FALSE(await_action("big", "admission/quota").is_null()) << actions_->dump() << log();
  ASSERT_EQ(apply("next.yaml", job("next")), 0);

  // No node can take "next" (h100-a is reserved for "big"): the MachineSet grows by one.
  const json up = await_action("gpu-h100-md-0", "scaleout/backlog", seconds(40));
  ASSERT_FALSE(up.is_null()) << actions_->dump() << log();
  EXPECT_EQ(up["operation"], "SCALE") << up.dump();
  EXPECT_EQ(up["target"]["kind"], "MachineSet") << up.dump();
  EXPECT_EQ(up["target"]["namespace"], "capi-system") << up.dump();
  EXPECT_EQ(up["body"]["replicas"], 2) << up.dump();
  EXPECT_NE(up["reason"].get<std::string>().find("backlog 8 GPUs in 1 workload"), std::string::npos)
      << up.dump();
  json p = pool();
  ASSERT_TRUE(p.is_object()) << ctl("state --json").out;
  EXPECT_EQ(p["nodes_launched"], 1) << p.dump();
  EXPECT_EQ(p["nodes"]["asked"], 1) << p.dump();
  EXPECT_EQ(p["target"], "MachineSet") << p.dump();
  const auto text = ctl("state");
  EXPECT_NE(text.out.find("NODE POOLS"), std::string::npos) << text.out;

  // The node joins; "next" is admitted onto it; nothing more is asked for meanwhile.
  ASSERT_EQ(apply("node-b.yaml", node("h100-b", "gpu-h100-md-0-bbbbb")), 0);
  const json admit = await_action("next", "admission/quota", seconds(20));
  ASSERT_FALSE(admit.is_null()) << actions_->dump() << log();
  EXPECT_NE(admit["body"]["metadata"]["annotations"]["gpuaas.io/placement"].get<std::string>().find(
                "h100-b"),
            std::string::npos)
      << admit.dump();

  // "next" is deleted: h100-b is empty, so after unneededTime it is cordoned, its Machine marked
  // and the MachineSet shrinks. h100-a, running "big", is never touched.
  ASSERT_EQ(ctl("delete -f " + write("next-del.yaml", job("next")) + " >/dev/null").exit_code, 0);
  const json down = await_action("gpu-h100-md-0", "scalein/unneeded", seconds(40));
  ASSERT_FALSE(down.is_null()) << actions_->dump() << log();
  EXPECT_EQ(down["body"]["replicas"], 1) << down.dump();
  const json machine = actions_->find("gpu-h100-md-0-bbbbb", "scalein/unneeded");
  ASSERT_FALSE(machine.is_null()) << actions_->dump();
  EXPECT_EQ(machine["target"]["kind"], "Machine") << machine.dump();
  EXPECT_EQ(machine["body"]["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"], "yes")
      << machine.dump();
  const json cordon = actions_->find("h100-b", "scalein/unneeded");
  ASSERT_FALSE(cordon.is_null()) << actions_->dump();
  EXPECT_EQ(cordon["body"]["spec"]["unschedulable"], true) << cordon.dump();
  // The cordon comes first, then the Machine, then the MachineSet.
  std::vector<std::string> order;
  for (const auto& a : actions_->all())
    if (a["rule"] == "scalein/unneeded") order.push_back(a["target"]["kind"]);
  EXPECT_EQ(order, (std::vector<std::string>{"Node", "Machine", "MachineSet"}));
  EXPECT_TRUE(actions_->find("h100-a", "scalein/unneeded").is_null()) << actions_->dump();
  EXPECT_TRUE(actions_->find("gpu-h100-md-0-aaaaa", "scalein/unneeded").is_null());
}

}  // namespace
}  // namespace gpuaas::testing
