// Node scale-out and scale-in through gpuaasd's NodePool actions, in virtual time:
// the simulator plays the pools, their provisioning delays and GPUs that show up late; the
// decisions are gpuaasd's own.
#include <gtest/gtest.h>

#include <string_view>

#include "gpuaas/sim/replay.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

namespace gpuaas::sim {
namespace {

using testing::options_for;
using testing::run;
using testing::scenario_of;

int64_t rule(const RunResult& r, std::string_view name) {
  for (const auto& [k, v] : r.actions_by_rule)
    if (k == name) return v;
  return 0;
}

PoolFigures pool(const RunResult& r, std::string_view name) {
  for (const auto& [k, v] : r.pools)
    if (k == name) return v;
  ADD_FAILURE() << "no pool " << name << " in the report";
  return {};
}

// The demo's bursty scenario: the demand trend asks for nodes before the jobs of a sweep
// arrive; cluster-autoscaler waits for pending pods and buys twice for nodes whose GPUs are late.
TEST(ScaleOutTest, BurstsWaitLessThanReactiveScalingAtNoMoreNodeHours) {
  auto s = load_scenario(GPUAAS_SOURCE_DIR "/deploy/demo/scaleout/scenario.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const RunResult reactive = run(*s, Baseline::kKueueLike);
  const RunResult gpuaas = run(*s, Baseline::kGpuaas);
  EXPECT_EQ(gpuaas.outcomes, 72);
  EXPECT_EQ(reactive.outcomes, 72);
  EXPECT_LE(gpuaas.queue_wait.mean(), 0.7 * reactive.queue_wait.mean());
  EXPECT_LE(gpuaas.node_seconds, reactive.node_seconds);
  EXPECT_GT(rule(gpuaas, "scaleout/forecast"), 0);
  EXPECT_GT(rule(gpuaas, "scalein/unneeded"), 0);
  EXPECT_LE(gpuaas.max_nodes, 12);  // the quota (96 GPUs) bounds the pool, not maxNodes (16)
  EXPECT_EQ(pool(gpuaas, "h100").provisioning_failures, 0);
}

// One 8-GPU job waits for a node whose GPUs become allocatable 5 minutes after it is Ready:
// a node Ready without GPUs counts as coming, so exactly one node is bought.
TEST(ScaleOutTest, GpusAllocatableLateDoNotBuyASecondNode) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: late-gpus}
spec:
  duration: 3h
  nodePools:
    - {name: h100, flavor: h100, gpusPerNode: 8, nodes: 1, minNodes: 1, maxNodes: 4,
       provisioningTime: 10m, gpuReadyDelay: 5m}
  workloads:
    - {name: long, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 8,
       duration: 2h}
    - {name: next, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 8,
       submitAt: 5m, duration: 30m}
)");
  const RunResult r = run(s, Baseline::kGpuaas);
  EXPECT_EQ(r.outcomes, 2);
  EXPECT_EQ(pool(r, "h100").nodes_launched, 1);
  EXPECT_EQ(r.max_nodes, 2);
  // Waited for the node: 10 min provisioning + 5 min for its GPUs, less the 5 min it came late.
  EXPECT_GT(r.queue_wait.percentile(100), 10 * 60.0);
  const RunResult reactive = run(s, Baseline::kKueueLike);
  EXPECT_GT(pool(reactive, "h100").nodes_launched, 1);  // the duplicate gpuaas avoids
}

// Chaos: new nodes register but never become Ready. Each is given up on after
// maxNodeProvisionTime (15 min) and reported; the backoff (5 min, doubling to 30) bounds the
// replacements over six hours.
TEST(ScaleOutTest, NodesThatNeverBecomeReadyAreGivenUpOnWithBoundedReplacements) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: chaos}
spec:
  duration: 6h
  nodePools:
    - {name: h100, flavor: h100, gpusPerNode: 8, nodes: 1, minNodes: 1, maxNodes: 8,
       provisioningTime: 5m, failProvisioning: true}
  workloads:
    - {name: long, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 8,
       duration: 6h}
    - {name: wait, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 2, gpusPerPod: 8,
       duration: 1h}
)");
  const RunResult r = run(s, Baseline::kGpuaas);
  const PoolFigures p = pool(r, "h100");
  // Asks for 2 nodes per attempt; attempts at 0, ~20m, ~45m, ~80m, ~125m, then every ~45m:
  // about 9 attempts in 6 h. Without the backoff it would be one every 15 minutes (24).
  EXPECT_GE(p.nodes_launched, 8);
  EXPECT_LE(p.nodes_launched, 20);
  EXPECT_GE(p.provisioning_failures, p.nodes_launched - 2);  // the last ones may still be pending
  EXPECT_LE(r.max_nodes, 3);
  EXPECT_GT(rule(r, "scaleout/giveUp"), 0);
  EXPECT_EQ(r.never_started, 1);  // "wait" never had its nodes
}

// Scale-in removes the empty node after 10 minutes unneeded and never the node running
// non-preemptible work.
TEST(ScaleOutTest, ScaleInRemovesTheEmptyNodeNeverTheBusyOne) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: scale-in}
spec:
  duration: 3h
  nodePools:
    - {name: h100, flavor: h100, gpusPerNode: 8, nodes: 3, minNodes: 0, maxNodes: 3,
       provisioningTime: 10m}
  workloads:
    - {name: keep, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 8,
       duration: 2h}
)");
  const RunResult r = run(s, Baseline::kGpuaas);
  EXPECT_EQ(r.outcomes, 1);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.nodes_removed, 3);  // two empty ones at ~10 min, the last after "keep" ended
  EXPECT_GT(rule(r, "scalein/unneeded"), 0);
  // The busy node stayed its whole run: at least 2 h of node time plus two empty nodes' 10 min.
  EXPECT_GE(r.node_seconds, 2 * 3600.0 + 2 * 600.0);
  EXPECT_LT(r.node_seconds, 2 * 3600.0 + 2 * 900.0 + 900.0);
}

// Deadline-driven scale-out of exactly the needed size: six 2-GPU jobs of 1 h due at 2h15m on
// one 4-GPU node would finish at ~3 h staggered (two miss); one more node (10 min away) lets
// four run at once and every deadline is met. Two nodes would be the backlog's answer.
TEST(ScaleOutTest, DeadlinesBuyExactlyTheNodesThatSaveThem) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: deadline-size}
spec:
  duration: 4h
  nodePools:
    - {name: a100, flavor: a100, gpusPerNode: 4, nodes: 1, minNodes: 1, maxNodes: 4,
       provisioningTime: 10m}
  workloads:
    - {name: train, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 2,
       duration: 1h, deadline: 2h15m, count: 6}
)");
  const RunResult r = run(s, Baseline::kGpuaas);
  EXPECT_EQ(r.deadlines, 6);
  EXPECT_EQ(r.deadline_misses, 0);
  EXPECT_EQ(pool(r, "a100").nodes_launched, 1);
  EXPECT_EQ(r.max_nodes, 2);
  EXPECT_GT(rule(r, "scaleout/deadline"), 0);
  EXPECT_EQ(rule(r, "scaleout/backlog"), 0);
}

// A node that holds only preemptible work is drained when the rest of the pool has room for it:
// "small" (priority 0, below the pool's preemptibleBelowPriority 50) started on the second node
// while the first was full; once "filler" ends, the first has room, "small" is preempted (rule
// scalein/drain), queued again and placed there, and the second node is removed.
TEST(ScaleOutTest, ANodeWithOnlyPreemptibleWorkIsDrainedWhenTheRestHasRoom) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: drain}
spec:
  duration: 4h
  nodePools:
    - {name: h100, flavor: h100, gpusPerNode: 8, nodes: 2, minNodes: 1, maxNodes: 2,
       provisioningTime: 10m}
  workloads:
    - {name: big, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 6,
       duration: 3h, priorityClass: high}
    - {name: filler, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 2,
       duration: 20m, priorityClass: high}
    - {name: small, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 2,
       submitAt: 5m, duration: 2h, priorityClass: low}
)");
  SimOptions o = options_for(Baseline::kGpuaas);
  o.policies = {{"drain.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {gpuaas.io/flavor: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
        - name: h100
          resources:
            - {name: cpu, nominalQuota: 1000}
            - {name: memory, nominalQuota: 10000Gi}
            - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: batch}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 0
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  flavor: h100
  gpusPerNode: 8
  minNodes: 1
  maxNodes: 2
  scaleIn: {preemptibleBelowPriority: 50}
)"}};
  auto r = run_simulation(s, o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->outcomes, 3);
  EXPECT_EQ(r->preemptions, 1);  // "small", by the drain; never "big"
  EXPECT_GT(rule(*r, "scalein/drain"), 0);
  EXPECT_EQ(r->nodes_removed, 1);
  // Both nodes until the drain (filler ends at ~22m, small is drained once the node was
  // unneeded 10 minutes), then one: well under 2 x 4 h of node time.
  EXPECT_LT(r->node_seconds, 4 * 3600.0 + 3600.0);
  EXPECT_GT(r->node_seconds, 4 * 3600.0 + 20 * 60.0);
}

// A flavor whose pool cannot grow any more sends the next workload to the next flavor of its
// ClusterQueue that has a pool with room, as Kueue's flavor fungibility tries the next flavor.
TEST(ScaleOutTest, WorkSpillsToTheNextFlavorsPoolWhenTheFirstIsAtMaxNodes) {
  const Scenario s = scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: spill}
spec:
  duration: 3h
  nodePools:
    - {name: a, flavor: a, gpusPerNode: 8, nodes: 0, minNodes: 0, maxNodes: 1,
       provisioningTime: 10m}
    - {name: b, flavor: b, gpusPerNode: 8, nodes: 0, minNodes: 0, maxNodes: 1,
       provisioningTime: 10m}
  workloads:
    - {name: train, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 8,
       duration: 1h, count: 2}
)");
  const RunResult r = run(s, Baseline::kGpuaas);
  EXPECT_EQ(r.outcomes, 2);
  EXPECT_EQ(r.never_started, 0);
  EXPECT_EQ(pool(r, "a").nodes_launched, 1);
  EXPECT_EQ(pool(r, "b").nodes_launched, 1);
}

// The Alibaba trace replayed in time on an elastic cluster (it starts empty; each node shape may
// grow to the trace's count, 10 minutes per node): three days of the trace's busy last month.
TEST(ScaleOutTest, ElasticAlibabaReplayWaitsLessOnFewerNodeHoursThanReactiveScaling) {
  const std::string dir = GPUAAS_SHARED_DIR "/traces/";
  auto s =
      alibaba_scenario(dir + "openb_pod_list_default.csv", dir + "openb_node_list_gpu_node.csv", 72,
                       true, std::chrono::minutes(10), 2880);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_GT(s->workloads.size(), 500u);
  const RunResult reactive = run(*s, Baseline::kKueueLike);
  const RunResult gpuaas = run(*s, Baseline::kGpuaas);
  EXPECT_LE(gpuaas.never_started, reactive.never_started);
  EXPECT_LT(gpuaas.queue_wait.mean(), reactive.queue_wait.mean());
  EXPECT_LT(gpuaas.node_seconds, reactive.node_seconds);
  EXPECT_EQ(gpuaas.deadlettered, 0);
}

}  // namespace
}  // namespace gpuaas::sim
