// gpuaas.io/v1alpha1 CostModel: every field read, one source per price, mistakes
// located at FILE:LINE:COLUMN.
#include <gtest/gtest.h>

#include <algorithm>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using testing::joined;
using testing::lines;
using testing::load_text;

// Two flavors and a pool for a100; the next document starts on line 14.
const char* kSet = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {flavor: a100, gpusPerNode: 8, maxNodes: 4, pricePerNodeHour: 20}
---
)";

TEST(CostModel, EveryFieldIsRead) {
  auto r = load_text(std::string(kSet) + R"(apiVersion: gpuaas.io/v1alpha1
kind: CostModel
metadata: {name: prices}
spec:
  currency: EUR
  flavors:
  - {name: h100, pricePerGPUHour: 4.5}
  - {name: a100, pricePerNodeHour: 24}
  outcomes:
    inference: {latencyMetric: revision_request_latencies, latencyUnit: ms, latencyObjective: 500ms}
    sessions: {kinds: [Notebook.kubeflow.org, Workspace.workspaces.example.com]}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  const CostModel& m = r.set.cost_model;
  EXPECT_EQ(m.name, "prices");
  EXPECT_EQ(m.currency, "EUR");
  ASSERT_EQ(m.flavors.size(), 2u);
  EXPECT_EQ(m.flavors[0].flavor, "h100");
  EXPECT_DOUBLE_EQ(*m.flavors[0].price_per_gpu_hour, 4.5);
  EXPECT_FALSE(m.flavors[0].price_per_node_hour.has_value());
  EXPECT_DOUBLE_EQ(*m.flavors[1].price_per_node_hour, 24);
  EXPECT_EQ(m.latency_metric, "revision_request_latencies");
  EXPECT_DOUBLE_EQ(m.latency_metric_unit_seconds, 0.001);
  EXPECT_DOUBLE_EQ(m.latency_objective_seconds, 0.5);
  EXPECT_EQ(m.session_kinds, (std::vector<std::string>{"Notebook.kubeflow.org",
                                                       "Workspace.workspaces.example.com"}));
}

TEST(CostModel, DefaultsWithoutOne) {
  auto r = load_text(kSet);
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.set.cost_model.name.empty());
  EXPECT_EQ(r.set.cost_model.currency, "USD");
  EXPECT_TRUE(r.set.cost_model.latency_metric.empty());
  // Sessions are the kinds plugins declare so; the list only adds kinds.
  EXPECT_TRUE(r.set.cost_model.session_kinds.empty());
}

TEST(CostModel, MistakesAreLocated) {
  auto r = load_text(std::string(kSet) + R"(apiVersion: gpuaas.io/v1alpha1
kind: CostModel
metadata: {name: prices}
spec:
  flavors:
  - {name: h100, pricePerGPUHour: 4, pricePerNodeHour: 30}
  - {name: a100}
  - {name: b200, pricePerGPUHour: 9}
  - {name: a100, pricePerGPUHour: -1}
  outcomes:
    inference: {latencyObjective: fast}
---
apiVersion: gpuaas.io/v1alpha1
kind: CostModel
metadata: {name: again}
spec: {}
)");
  EXPECT_FALSE(r.ok());
  auto got = lines(r.errors);
  std::sort(got.begin(), got.end());  // file order
  const std::vector<std::string> want = {
      "p.yaml:19:5: spec.flavors[0]: give pricePerGPUHour or pricePerNodeHour, not both (one "
      "source of truth per price: the GPU-hour price is derived from the node-hour one)",
      "p.yaml:20:5: spec.flavors[1]: needs pricePerGPUHour or pricePerNodeHour",
      "p.yaml:21:5: CostModel \"prices\" prices ResourceFlavor \"b200\", which the policy set does "
      "not define",
      "p.yaml:22:35: spec.flavors[3].pricePerGPUHour: -1 is below 0",
      "p.yaml:24:35: spec.outcomes.inference.latencyObjective: \"fast\" is not a latency above 0 "
      "(e.g. 500ms, 2s or 1.5s)",
      "p.yaml:28:18: CostModel \"again\" is a second CostModel; a policy set has one (\"prices\" "
      "is "
      "at p.yaml:16:18)",
  };
  EXPECT_EQ(got, want);
}

TEST(CostModel, ANodeHourPriceNeedsAPool) {
  auto r = load_text(std::string(kSet) + R"(apiVersion: gpuaas.io/v1alpha1
kind: CostModel
metadata: {name: prices}
spec:
  flavors: [{name: h100, pricePerNodeHour: 30}]
)");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(joined(r.errors).find("pricePerNodeHour for \"h100\" needs a NodePool of that flavor"),
            std::string::npos)
      << joined(r.errors);
}

}  // namespace
}  // namespace gpuaas::policy
