// Scenario files: the documented form, defaults, expansion of copies, and errors with their place.
#include "gpuaas/sim/scenario.hpp"

#include <gtest/gtest.h>

namespace gpuaas::sim {
namespace {

using namespace std::chrono_literals;

const char* kIssueExample = R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: two-then-two}
spec:
  duration: 6h
  policies: [policy.yaml]
  nodePools:
    - name: a100
      flavor: a100
      gpusPerNode: 4
      nodes: 1
      minNodes: 1
      maxNodes: 4
      provisioningTime: 10m
      pricePerNodeHour: 32.0
      failProvisioning: false
  workloads:
    - name: job-1
      namespace: team-a
      queue: batch
      kind: PyTorchJob
      pods: 1
      gpusPerPod: 2
      submitAt: 0s
      duration: 1h
      deadline: 2h
      priorityClass: high
      count: 3
      every: 5m
      hideDuration: false
)";

TEST(ScenarioTest, ReadsTheDocumentedForm) {
  auto s = parse_scenario(kIssueExample, "two.yaml", "/scenarios");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->name, "two-then-two");
  EXPECT_EQ(s->duration, 6h);
  ASSERT_EQ(s->policy_files.size(), 1u);
  EXPECT_EQ(s->policy_files[0], "/scenarios/policy.yaml");
  ASSERT_EQ(s->node_pools.size(), 1u);
  const auto& p = s->node_pools[0];
  EXPECT_EQ(p.gpus_per_node, 4);
  EXPECT_EQ(p.max_nodes, 4);
  EXPECT_EQ(p.provisioning_time, 10min);
  EXPECT_DOUBLE_EQ(p.price_per_node_hour, 32.0);
  ASSERT_EQ(s->workloads.size(), 1u);
  const auto& w = s->workloads[0];
  EXPECT_EQ(w.gpu_milli_per_pod, 2000);
  EXPECT_EQ(w.deadline, Millis(2h));
  EXPECT_EQ(w.priority_class, "high");
  const auto all = expand_workloads(*s);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name, "job-1-1");
  EXPECT_EQ(all[2].name, "job-1-3");
  EXPECT_EQ(all[2].submit_at, Millis(10min));
}

TEST(ScenarioTest, FractionalGpusAndDefaults) {
  auto s = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  nodePools: [{name: p, flavor: f, nodes: 2}]
  workloads:
    - {name: nb, namespace: a, queue: q, kind: Notebook, gpusPerPod: "0.5", duration: 1h, lifetime: 3h}
)",
                          "x.yaml", "");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->workloads[0].gpu_milli_per_pod, 500);
  EXPECT_EQ(s->workloads[0].lifetime, Millis(3h));
  EXPECT_EQ(s->node_pools[0].max_nodes, 2);  // maxNodes defaults to nodes: no autoscaling
  EXPECT_EQ(s->duration, 6h);
}

TEST(ScenarioTest, ErrorsNameFileLineAndField) {
  auto s = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 6 hours
  nodePools: [{name: p, flavor: f, nodes: 5, maxNodes: 2}]
  workloads:
    - name: j
      namespace: a
      queue: q
      kind: TFJob
      duration: 1h
      gpusPerPod: lots
      colour: blue
)",
                          "bad.yaml", "");
  ASSERT_FALSE(s.is_ok());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("bad.yaml:4:13: spec.duration: expected a duration"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.nodePools[0].nodes: must be within"), std::string::npos) << m;
  EXPECT_NE(m.find("bad.yaml:10:13: spec.workloads[0].kind: unknown kind \"TFJob\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("spec.workloads[0].gpusPerPod: expected a quantity"), std::string::npos) << m;
  EXPECT_NE(m.find("bad.yaml:13:7: spec.workloads[0].colour: unknown field"), std::string::npos)
      << m;
}

TEST(ScenarioTest, MissingFileAndBrokenYaml) {
  EXPECT_FALSE(load_scenario("/nonexistent/scenario.yaml").is_ok());
  auto s = parse_scenario("spec: [unclosed", "broken.yaml", "");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message().rfind("broken.yaml:1:", 0), 0u) << s.status().message();
}

TEST(ScenarioTest, ShapesTheClusterCannotRunAreRefused) {
  auto s = parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  start: 2026-01-05T08:00:00Z and then some
  workloads:
    - {name: nb, namespace: a, queue: q, kind: Notebook, pods: 2, duration: 1h}
    - {name: j, namespace: a, queue: q, kind: Job, gpusPerPod: 1500m, duration: 1h}
)",
                          "shapes.yaml", "");
  ASSERT_FALSE(s.is_ok());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("shapes.yaml:4:10: spec.start: expected an RFC 3339"), std::string::npos) << m;
  EXPECT_NE(m.find("spec.workloads[0].pods: a Notebook runs exactly one pod"), std::string::npos)
      << m;
  EXPECT_NE(m.find("spec.workloads[1].gpusPerPod: a share of one GPU"), std::string::npos) << m;
}

}  // namespace
}  // namespace gpuaas::sim
