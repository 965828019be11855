// gpuaas.io/v1alpha1 ServiceObjective: every field read, vLLM's metric names by default, mistakes
// located at FILE:LINE:COLUMN.
#include <gtest/gtest.h>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using testing::joined;
using testing::load_text;

const char* kQueue = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: serving}
spec: {namespaceSelector: {}}
---
)";

TEST(ServiceObjective, EveryFieldIsRead) {
  auto r = load_text(std::string(kQueue) + R"(apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: chat}
spec:
  selector: {kinds: [InferenceService], namespaces: [team-a], clusterQueues: [serving], matchLabels: {app: chat}}
  latency: {ttftP95: 400ms, tpotP95: 50ms, e2eP95: 20s}
  errorBudget: 0.02
  quality:
    threshold: 0.95
    source: metric
    passMetric: eval_pass_total
    totalMetric: eval_total
  metrics: {ttft: my:ttft_seconds, requests: my:requests_total}
  capacity: {window: 2m, minRequests: 50}
  scaling: {perReplicaRps: 12, headroom: 0.15, leadTime: 90s, interval: 20s}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.service_objectives.size(), 1u);
  const ServiceObjective& o = r.set.service_objectives[0];
  EXPECT_EQ(o.name, "chat");
  EXPECT_EQ(o.selector.kinds, std::vector<std::string>{"InferenceService"});
  EXPECT_EQ(o.selector.namespaces, std::vector<std::string>{"team-a"});
  EXPECT_EQ(o.selector.cluster_queues, std::vector<std::string>{"serving"});
  EXPECT_EQ(o.selector.match_labels.at("app"), "chat");
  EXPECT_DOUBLE_EQ(*o.ttft_p95, 0.4);
  EXPECT_DOUBLE_EQ(*o.tpot_p95, 0.05);
  EXPECT_DOUBLE_EQ(*o.e2e_p95, 20);
  EXPECT_DOUBLE_EQ(o.error_budget, 0.02);
  EXPECT_DOUBLE_EQ(o.quality_threshold, 0.95);
  EXPECT_EQ(o.quality_source, QualitySource::kMetric);
  EXPECT_EQ(o.pass_metric, "eval_pass_total");
  EXPECT_EQ(o.total_metric, "eval_total");
  EXPECT_EQ(o.ttft_metric, "my:ttft_seconds");
  EXPECT_EQ(o.requests_metric, "my:requests_total");
  EXPECT_EQ(o.tpot_metric, "vllm:inter_token_latency_seconds");  // the default
  EXPECT_EQ(o.window, std::chrono::seconds(120));
  EXPECT_DOUBLE_EQ(o.min_requests, 50);
  ASSERT_TRUE(o.scaling.has_value());
  EXPECT_DOUBLE_EQ(*o.scaling->per_replica_rps, 12);
  EXPECT_DOUBLE_EQ(o.scaling->headroom, 0.15);
  EXPECT_EQ(o.scaling->lead_time, std::chrono::seconds(90));
  EXPECT_EQ(o.scaling->interval, std::chrono::seconds(20));
}

TEST(ServiceObjective, ScalingIsOffUnlessWrittenAndHasDefaults) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: a}
---
apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: b}
spec: {scaling: {}}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_FALSE(r.set.service_objectives[0].scaling.has_value());
  const auto& s = r.set.service_objectives[1].scaling;
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->per_replica_rps.has_value());  // the measured knee then
  EXPECT_DOUBLE_EQ(s->headroom, 0.2);
  EXPECT_EQ(s->lead_time, std::chrono::seconds(60));
  EXPECT_EQ(s->interval, std::chrono::seconds(30));
}

TEST(ServiceObjective, ScalingMistakesAreLocated) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: x}
spec:
  scaling:
    perReplicaRps: -3
    headroom: 0.95
    interval: 0s
    target: 4
)");
  ASSERT_FALSE(r.ok());
  const std::string all = joined(r.errors);
  EXPECT_NE(all.find(":6:"), std::string::npos) << all;
  EXPECT_NE(all.find("-3 is not a positive rate"), std::string::npos) << all;
  EXPECT_NE(all.find(":7:"), std::string::npos) << all;
  EXPECT_NE(all.find("0.95 is not a share between 0 and 0.9"), std::string::npos) << all;
  EXPECT_NE(all.find(":8:"), std::string::npos) << all;
  EXPECT_NE(all.find("at least 1s"), std::string::npos) << all;
  EXPECT_NE(all.find("target"), std::string::npos) << all;
}

TEST(ServiceObjective, DefaultsAreVllmsAndFinishReasons) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: b}
spec: {latency: {ttftP95: 1s}}
---
apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: a}
)");
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.service_objectives.size(), 2u);
  EXPECT_EQ(r.set.service_objectives[0].name, "a");  // by name: the first that matches wins
  const ServiceObjective& b = r.set.service_objectives[1];
  EXPECT_EQ(b.quality_source, QualitySource::kFinishReason);
  EXPECT_EQ(b.good_reasons, (std::vector<std::string>{"stop", "length"}));
  EXPECT_EQ(b.requests_metric, "vllm:request_success_total");
  EXPECT_EQ(b.ttft_metric, "vllm:time_to_first_token_seconds");
  EXPECT_FALSE(b.tpot_p95.has_value());
  EXPECT_DOUBLE_EQ(b.quality_threshold, 0.99);
}

TEST(ServiceObjective, MistakesAreLocated) {
  auto r = load_text(R"(apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: x}
spec:
  latency: {ttftP95: fast}
  errorBudget: 2
  quality: {source: metric, passMetric: "bad name"}
  selector: {clusterQueues: [nowhere]}
  capacity: {window: 0s}
  unknownField: 1
---
apiVersion: gpuaas.io/v1alpha1
kind: ServiceObjective
metadata: {name: x}
)");
  ASSERT_FALSE(r.ok());
  const std::string all = joined(r.errors);
  EXPECT_NE(all.find(":5:"), std::string::npos) << all;
  EXPECT_NE(all.find("\"fast\" is not a latency above 0"), std::string::npos) << all;
  EXPECT_NE(all.find(":6:"), std::string::npos) << all;
  EXPECT_NE(all.find("not a share between 0 and 1"), std::string::npos) << all;
  EXPECT_NE(all.find("\"bad name\" is not a Prometheus metric name"), std::string::npos) << all;
  EXPECT_NE(all.find("needs passMetric and totalMetric"), std::string::npos) << all;
  EXPECT_NE(all.find("names ClusterQueue \"nowhere\", which is not defined"), std::string::npos)
      << all;
  EXPECT_NE(all.find("at least 1s"), std::string::npos) << all;
  EXPECT_NE(all.find("unknownField"), std::string::npos) << all;
  EXPECT_NE(all.find("ServiceObjective \"x\" is defined twice"), std::string::npos) << all;
}

}  // namespace
}  // namespace gpuaas::policy
