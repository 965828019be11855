// The queue families as a scrape shows them: a series per ClusterQueue from the start, Kueue's
// reasons for evictions and preemptions, and series of a ClusterQueue the policy dropped removed.
#include "admission/stage/queue_metrics.hpp"

#include <gtest/gtest.h>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/policy/policy_loader.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"

namespace gpuaas::core {
namespace {

std::shared_ptr<const policy::PolicySet> policy_of(const std::vector<std::string>& queues) {
  std::string y =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a100}\n";
  for (const auto& q : queues)
    y += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: " + q +
         "}\nspec:\n  cohort: all\n  namespaceSelector: {}\n  resourceGroups:\n"
         "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: a100\n"
         "      resources: [{name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}]\n";
  auto r = policy::parse_policy_texts({{"p.yaml", y}});
  EXPECT_TRUE(r.ok());
  return std::make_shared<const policy::PolicySet>(std::move(r.set));
}

std::string scrape(const telemetry::Registry& r) {
  return telemetry::TextSerializer().Serialize(r.Collect());
}

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(QueueMetricsTest, EveryClusterQueueShowsFromTheStart) {
  telemetry::Registry registry;
  QueueMetrics m(&registry);
  admission::Scheduler s(policy_of({"research", "prod"}));
  m.refresh(s);
  const std::string t = scrape(registry);
  EXPECT_TRUE(has(t, "gpuaas_pending_workloads{cluster_queue=\"prod\",status=\"active\"} 0")) << t;
  EXPECT_TRUE(
      has(t, "gpuaas_pending_workloads{cluster_queue=\"research\",status=\"inadmissible\"} 0"));
  EXPECT_TRUE(has(t,
                  "gpuaas_cluster_queue_nominal_quota{cluster_queue=\"prod\",cohort=\"all\","
                  "flavor=\"a100\",resource=\"nvidia.com/gpu\"} 8"));
  EXPECT_TRUE(has(t,
                  "gpuaas_cluster_queue_borrowing_limit{cluster_queue=\"prod\",cohort=\"all\","
                  "flavor=\"a100\",resource=\"nvidia.com/gpu\"} 4"));
  EXPECT_TRUE(has(t,
                  "gpuaas_cluster_queue_resource_usage{cluster_queue=\"prod\",cohort=\"all\","
                  "flavor=\"a100\",resource=\"nvidia.com/gpu\"} 0"));
  EXPECT_TRUE(has(t, "gpuaas_admitted_workloads_total{cluster_queue=\"research\"} 0"));
  EXPECT_TRUE(has(t, "gpuaas_admission_wait_time_seconds_count{cluster_queue=\"research\"} 0"));
  // No lendingLimit: +Inf. Every GPU flavor shows its pending GPUs, and Kueue's reasons start at 0.
  EXPECT_TRUE(has(t,
                  "gpuaas_cluster_queue_lending_limit{cluster_queue=\"prod\",cohort=\"all\","
                  "flavor=\"a100\",resource=\"nvidia.com/gpu\"} +Inf"));
  EXPECT_TRUE(has(t, "gpuaas_pending_gpus{cluster_queue=\"prod\",flavor=\"a100\"} 0"));
  EXPECT_TRUE(
      has(t, "gpuaas_evicted_workloads_total{cluster_queue=\"prod\",reason=\"Preempted\"} 0"));
  EXPECT_TRUE(has(t,
                  "gpuaas_preempted_workloads_total{preempting_cluster_queue=\"prod\",reason="
                  "\"InCohortFairSharing\"} 0"));
}

TEST(QueueMetricsTest, AClusterQueueDroppedByAReloadLeaves) {
  telemetry::Registry registry;
  QueueMetrics m(&registry);
  admission::Scheduler s(policy_of({"research", "prod"}));
  m.refresh(s);
  s.set_policy(policy_of({"prod"}), admission::Time{});
  m.refresh(s);
  const std::string t = scrape(registry);
  EXPECT_EQ(t.find("gpuaas_pending_workloads{cluster_queue=\"research\""), std::string::npos) << t;
  EXPECT_NE(t.find("gpuaas_pending_workloads{cluster_queue=\"prod\""), std::string::npos);
}

TEST(QueueMetricsTest, EvictionsAndPreemptionsCarryKueuesReasons) {
  telemetry::Registry registry;
  QueueMetrics m(&registry);
  m.evicted("research", "preemption/reclaimWithinCohort", "prod");
  m.evicted("research", "scalein/drain", "");
  m.admitted("prod", 30);
  m.decision("admission/quota");
  const std::string t = scrape(registry);
  EXPECT_TRUE(
      has(t, "gpuaas_evicted_workloads_total{cluster_queue=\"research\",reason=\"Preempted\"} 1"))
      << t;
  EXPECT_TRUE(has(
      t, "gpuaas_evicted_workloads_total{cluster_queue=\"research\",reason=\"NodeScaleIn\"} 1"));
  EXPECT_TRUE(has(t,
                  "gpuaas_preempted_workloads_total{preempting_cluster_queue=\"prod\",reason="
                  "\"InCohortReclamation\"} 1"));
  EXPECT_TRUE(has(t, "gpuaas_admitted_workloads_total{cluster_queue=\"prod\"} 1"));
  EXPECT_TRUE(has(t, "gpuaas_admission_wait_time_seconds_sum{cluster_queue=\"prod\"} 30"));
  EXPECT_TRUE(has(t, "gpuaas_decisions_total{rule=\"admission/quota\"} 1"));
  EXPECT_EQ(QueueMetrics::preemption_reason("preemption/fairSharing"), "InCohortFairSharing");
  EXPECT_EQ(QueueMetrics::preemption_reason("preemption/withinClusterQueue"), "InClusterQueue");
  EXPECT_EQ(QueueMetrics::preemption_reason("preemption/borrowWithinCohort"),
            "InCohortReclaimWhileBorrowing");
  EXPECT_EQ(QueueMetrics::preemption_reason("reclaim/lend"), "ReclaimLentQuota");
}

}  // namespace
}  // namespace gpuaas::core
