// GPU accounting and the cost report, as event sequences through gpuaasd (the real plugins on
// the in-process bus, event time only): every expected figure is worked out by hand in the
// comment beside it. Pods start at the harness's t0 on an 8-GPU l40s node.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness_objects.hpp"
#include "reclaim_harness.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::Harness;

const std::string kPrice =
    "apiVersion: gpuaas.io/v1alpha1\nkind: CostModel\nmetadata: {name: prices}\n"
    "spec:\n  currency: EUR\n  flavors:\n  - {name: l40s, pricePerGPUHour: 3}\n---\n";

const json& tenant(const json& report, const std::string& name) {
  for (const auto& t : report["tenants"])
    if (t["tenant"] == name) return t;
  static const json none;
  return none;
}

TEST(GpuAccountingTest, AllocatedBusyAndCostOfAnHour) {
  Harness h(test::cluster_policy() + kPrice);
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  // Samples every 30 s from t0+30s: one GPU (index 0) at 50 %.
  h.run_until(t0 + 1h, 50.0);
  const json r = h.report();
  const json& t = tenant(r, "serving");
  ASSERT_TRUE(t.is_object()) << r.dump(2);
  EXPECT_EQ(r["currency"], "EUR");
  // Two GPUs requested for 3600 s.
  EXPECT_DOUBLE_EQ(t["gpu_hours"]["allocated"].get<double>(), 2.0);
  // 0.5 of one GPU from the first sample (t0+30s) on: 0.5 * 3570 / 3600 = 0.49583.
  EXPECT_DOUBLE_EQ(t["gpu_hours"]["busy"].get<double>(), 0.4958);
  // Charged max(requested 2, used 0.5) = 2 GPUs for an hour, at 3 EUR: 6.
  EXPECT_DOUBLE_EQ(t["gpu_hours"]["charged"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(t["cost"]["allocated"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(t["cost"]["idle_reserved"].get<double>(), 0.0);
  EXPECT_TRUE(t["cost_per_outcome"].is_null());  // nothing finished yet
  ASSERT_EQ(t["projects"].size(), 1u);
  EXPECT_EQ(t["projects"][0]["namespace"], "team-a");
  // The node: 8 GPUs for an hour at 3 = 24; nobody was charged for 6 of them: 18.
  EXPECT_DOUBLE_EQ(r["cluster"]["capacity_gpu_hours"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(r["cluster"]["cost"].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(r["cluster"]["idle_cost"].get<double>(), 18.0);
  EXPECT_EQ(r["cluster"]["flavors"][0]["price_source"], "CostModel");

  // /metrics carries the same figures, in seconds (summed in steps: to 1e-9).
  EXPECT_NEAR(
      h.metric(
          "gpuaas_cost_total{charge=\"allocated\",cluster_queue=\"serving\",namespace=\"team-a\"}"),
      6.0, 1e-9);
  // dcgm-exporter names GPU 0 from t0+30s; before that, and the pod's second GPU throughout, no
  // sample names which device it is: 30 + 3600 GPU-seconds under gpu="".
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_gpu_allocated_seconds_total{cluster_queue=\"serving\",flavor="
                            "\"l40s\",gpu=\"0\",namespace=\"team-a\",node=\"gpu-0\"}"),
                   3570.0);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_gpu_allocated_seconds_total{cluster_queue=\"serving\",flavor="
                            "\"l40s\",gpu=\"\",namespace=\"team-a\",node=\"gpu-0\"}"),
                   3630.0);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_gpu_busy_seconds_total{cluster_queue=\"serving\",flavor="
                            "\"l40s\",gpu=\"0\",namespace=\"team-a\",node=\"gpu-0\"}"),
                   1785.0);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_gpu_capacity_seconds_total{flavor=\"l40s\",node=\"gpu-0\"}"),
                   8 * 3600.0);
  EXPECT_NEAR(h.metric("gpuaas_idle_cluster_cost_total{flavor=\"l40s\"}"), 18.0, 1e-9);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_gpu_hour_price{flavor=\"l40s\",source=\"CostModel\"}"), 3.0);
}

TEST(GpuAccountingTest, BusyStopsCountingWhenSamplesStop) {
  Harness h(test::cluster_policy() + kPrice);
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(t0 + 10min, 50.0);  // samples from t0+30s to t0+10m
  h.run_until(t0 + 1h, std::nullopt);
  const double busy = tenant(h.report(), "serving")["gpu_hours"]["busy"].get<double>();
  // 0.5 GPU from t0+30s until the last sample is 5 min old, noticed within 5 more minutes:
  // between 15 min 30 s and 20 min 30 s of half a GPU.
  EXPECT_GE(busy, 0.5 * 930 / 3600 - 1e-4);
  EXPECT_LE(busy, 0.5 * 1230 / 3600 + 1e-4);
}

TEST(GpuAccountingTest, TheWindowCountsOnlyItsOwnTime) {
  Harness h(test::cluster_policy() + kPrice);
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(t0 + 1h, std::nullopt);
  // The last 30 min: the window starts at a snapshot (every 5 min) at or before t0+30m.
  const json r = h.report("1800");
  EXPECT_DOUBLE_EQ(r["window_seconds"].get<double>(), 1800.0) << r.dump(2);
  EXPECT_DOUBLE_EQ(tenant(r, "serving")["gpu_hours"]["allocated"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(tenant(r, "serving")["cost"]["total"].get<double>(), 3.0);
  // Longer than the ledger's life: all of it.
  const json all = h.report("86400");
  EXPECT_DOUBLE_EQ(tenant(all, "serving")["gpu_hours"]["allocated"].get<double>(), 2.0);
}

TEST(GpuAccountingTest, IdleReservedTimeIsChargedOnALineOfItsOwn) {
  Harness h(test::cluster_policy() + kPrice +
            "apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: idle}\n"
            "spec:\n  selector: {kinds: [RayCluster]}\n  idle: {window: 10m}\n"
            "  gracePeriod: 0s\n  stabilizationWindow: 0s\n  cooldown: 0s\n"
            "  keepQuotaFor: 2h\n  lendIdleQuota: false\n");
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(t0 + 10min + 30s, 0.0);
  ASSERT_EQ(h.with_rule("reclaim/idle").size(), 1u) << h.explain("team-a/rc").dump();
  const auto parked = h.now;           // the scale to zero was decided at this event time
  h.apply_last_patch("team-a", "rc");  // KubeRay removes the worker at once
  h.run_until(parked + 30min, 0.0);
  const json t = tenant(h.report(), "serving");
  // Two GPUs held at zero for 30 min: 1 GPU-hour, 3 EUR on its own line.
  EXPECT_DOUBLE_EQ(t["gpu_hours"]["idle_reserved"].get<double>(), 1.0) << t.dump(2);
  EXPECT_DOUBLE_EQ(t["cost"]["idle_reserved"].get<double>(), 3.0);
  // Allocated while the worker ran: 2 GPUs for 10 min 30 s = 0.35 GPU-hours.
  EXPECT_DOUBLE_EQ(t["gpu_hours"]["allocated"].get<double>(), 0.35);
  EXPECT_DOUBLE_EQ(t["cost"]["total"].get<double>(), 3.0 + 1.05);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_gpu_idle_reserved_seconds_total{cluster_queue=\"serving\","
                            "flavor=\"l40s\",namespace=\"team-a\"}"),
                   3600.0);
}

TEST(GpuAccountingTest, ASucceededJobIsOneOutcomeAndPricesIt) {
  Harness h(test::cluster_policy() + kPrice);
  const auto t0 = h.now;
  h.publish(sim::Change::kAdded, test::batch_job("train", 4, true));
  ASSERT_TRUE(h.with_rule("admission/quota").size() == 1u) << h.explain("team-b/train").dump();
  json running = test::batch_job("train", 4, false);
  running["metadata"]["resourceVersion"] = "2";
  running["status"] = {{"active", 1}, {"startTime", "2027-01-15T08:00:00Z"}};
  h.publish(sim::Change::kModified, running);
  h.publish(sim::Change::kAdded,
            Harness::owned_pod("team-b", "batch/v1", "Job", "train", "train-abcde", 4));
  h.run_until(t0 + 30min, std::nullopt);
  json done = running;
  done["metadata"]["resourceVersion"] = "3";
  done["status"] = {{"succeeded", 1}, {"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  h.publish(sim::Change::kModified, done);
  // The same status again (a resync) is not a second outcome.
  done["metadata"]["resourceVersion"] = "4";
  h.publish(sim::Change::kModified, done);
  json pod = Harness::owned_pod("team-b", "batch/v1", "Job", "train", "train-abcde", 4);
  pod["status"]["phase"] = "Succeeded";
  h.publish(sim::Change::kModified, pod);
  h.run_until(t0 + 1h, std::nullopt);
  const json t = tenant(h.report(), "batch");
  // 4 GPUs for 30 min: 2 GPU-hours, 6 EUR, one job: 6 EUR per outcome.
  EXPECT_DOUBLE_EQ(t["gpu_hours"]["allocated"].get<double>(), 2.0) << t.dump(2);
  EXPECT_DOUBLE_EQ(t["outcomes"]["jobs"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(t["cost_per_outcome"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_outcomes_total{cluster_queue=\"batch\",kind=\"job\","
                            "namespace=\"team-b\"}"),
                   1.0);
}

TEST(GpuAccountingTest, InferenceRequestsWithinTheObjectiveAreOutcomes) {
  Harness h(test::cluster_policy() +
            "apiVersion: gpuaas.io/v1alpha1\nkind: CostModel\nmetadata: {name: prices}\n"
            "spec:\n  flavors: [{name: l40s, pricePerGPUHour: 3}]\n  outcomes:\n"
            "    inference: {latencyMetric: request_latency, latencyUnit: ms, "
            "latencyObjective: 500ms}\n");
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  // The serving pod's latency histogram in milliseconds: 40 requests within 500 ms of 50.
  h.now = t0 + 10min;
  h.request_latencies("team-a", "rc-gpu-worker-x1", 10, 40, 50);
  h.run_until(t0 + 20min, std::nullopt);
  // 60 more within the objective.
  h.request_latencies("team-a", "rc-gpu-worker-x1", 30, 100, 130);
  h.run_until(t0 + 30min, std::nullopt);
  // The pod restarted: its counters began again.
  h.request_latencies("team-a", "rc-gpu-worker-x1", 5, 20, 25);
  h.run_until(t0 + 1h, std::nullopt);
  const json t = tenant(h.report(), "serving");
  EXPECT_DOUBLE_EQ(t["outcomes"]["inference_requests"].get<double>(), 40 + 60 + 20) << t.dump(2);
  // 2 GPU-hours at 3 over 120 answers within the objective.
  EXPECT_DOUBLE_EQ(t["cost_per_outcome"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_outcomes_total{cluster_queue=\"serving\",kind=\""
                            "inference_request\",namespace=\"team-a\"}"),
                   120.0);
}

TEST(GpuAccountingTest, ANotebookRunWithBusyGpusIsOneOutcome) {
  Harness h(test::cluster_policy() + kPrice);
  const auto t0 = h.now;
  const json nb = test::notebook("alice");
  h.publish(sim::Change::kAdded, nb);
  const json pod =
      Harness::owned_pod("team-a", "kubeflow.org/v1", "Notebook", "alice", "alice-0", 1);
  // First run: idle for 10 min, then busy: one outcome, however long it stays busy.
  h.publish(sim::Change::kAdded, pod);
  h.run_until(t0 + 10min, std::nullopt);
  for (int i = 0; i < 3; ++i) {
    h.now += 1min;
    h.gpu_util("team-a", "alice-0", 40);
    h.tick();
  }
  h.publish(sim::Change::kDeleted, pod);
  // Second run, busy too: a second outcome. Third run, never busy: none.
  h.now += 1h;
  h.publish(sim::Change::kAdded, pod);
  h.now += 1min;
  h.gpu_util("team-a", "alice-0", 70);
  h.tick();
  h.publish(sim::Change::kDeleted, pod);
  h.now += 1h;
  h.publish(sim::Change::kAdded, pod);
  h.run_until(h.now + 10min, std::nullopt);
  const json t = tenant(h.report(), "");  // the notebook is in no queue
  EXPECT_DOUBLE_EQ(t["outcomes"]["notebooks"].get<double>(), 2.0) << h.report().dump(2);
}

TEST(GpuAccountingTest, PricesComeFromTheNodePoolUnlessTheCostModelOverrides) {
  // A NodePool's node-hour price over its GPUs per node is the GPU-hour price.
  const std::string pool =
      "apiVersion: gpuaas.io/v1alpha1\nkind: NodePool\nmetadata: {name: l40s-pool}\n"
      "spec: {flavor: l40s, gpusPerNode: 8, maxNodes: 4, pricePerNodeHour: 16,\n"
      "       nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}}\n---\n";
  {
    Harness h(test::cluster_policy() + pool);
    const auto t0 = h.now;
    h.running_ray_cluster("team-a", "rc", 2);
    h.run_until(t0 + 1h, std::nullopt);
    const json r = h.report();
    EXPECT_EQ(r["cluster"]["flavors"][0]["price_source"], "NodePool") << r.dump(2);
    EXPECT_DOUBLE_EQ(r["cluster"]["flavors"][0]["gpu_hour_price"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(tenant(r, "serving")["cost"]["allocated"].get<double>(), 4.0);
  }
  {
    // The CostModel's node-hour price replaces the pool's; still divided by its GPUs per node.
    Harness h(test::cluster_policy() + pool +
              "apiVersion: gpuaas.io/v1alpha1\nkind: CostModel\nmetadata: {name: prices}\n"
              "spec:\n  flavors:\n  - {name: l40s, pricePerNodeHour: 40}\n");
    const auto t0 = h.now;
    h.running_ray_cluster("team-a", "rc", 2);
    h.run_until(t0 + 1h, std::nullopt);
    const json r = h.report();
    EXPECT_EQ(r["cluster"]["flavors"][0]["price_source"], "CostModel") << r.dump(2);
    EXPECT_DOUBLE_EQ(r["cluster"]["flavors"][0]["gpu_hour_price"].get<double>(), 5.0);
    EXPECT_DOUBLE_EQ(tenant(r, "serving")["cost"]["allocated"].get<double>(), 10.0);
    EXPECT_EQ(r["currency"], "USD");
  }
}

}  // namespace
}  // namespace gpuaas::core
