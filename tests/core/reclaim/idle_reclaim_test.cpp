// Idle reclaim as event sequences: gpuaasd (with the real plugins, on the in-process bus) gets
// objects, dcgm-exporter samples and ticks stamped with event time, and the tests read the
// actions and explain. One test per rule: the idle window's edges, activity restarting it,
// missing data, the opt-out annotation, minimum runtime, keepQuotaFor's expiry and the re-queue,
// waking while lent, and flapping input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness_objects.hpp"
#include "reclaim_harness.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::Harness;

std::string policy(const std::string& spec) {
  return test::cluster_policy() +
         "apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: idle}\n"
         "spec:\n  selector: {kinds: [RayCluster]}\n" +
         spec;
}

const std::string kTenMinutes =
    "  idle: {window: 10m}\n  gracePeriod: 0s\n  stabilizationWindow: 0s\n  cooldown: 0s\n";

TEST(IdleReclaimTest, ScalesToZeroOnlyOnceTheWindowHasPassed) {
  Harness h(policy(kTenMinutes + "  keepQuotaFor: 1h\n  lendIdleQuota: false\n"));
  h.running_ray_cluster("team-a", "rc", 2);
  const auto start = h.now;
  h.run_until(start + 9min + 50s, 0.0);
  EXPECT_TRUE(h.with_rule("reclaim/idle").empty()) << h.explain("team-a/rc").dump();
  h.run_until(start + 10min + 30s, 0.0);
  const auto zero = h.with_rule("reclaim/idle");
  ASSERT_EQ(zero.size(), 1u) << h.explain("team-a/rc").dump();
  EXPECT_EQ(zero[0]["body"]["spec"]["workerGroupSpecs"][0]["replicas"], 0) << zero[0].dump();
  const json x = h.explain("team-a/rc");
  EXPECT_EQ(x["state"], "ScaledToZero") << x.dump();
  EXPECT_EQ(x["quota_reserved_idle"], true);
  EXPECT_EQ(x["reclaim"]["state"], "AtZero");
  EXPECT_EQ(x["reclaim"]["quota"], "Reserved");
  EXPECT_EQ(x["reclaim"]["rule"], "IdleReclaimPolicy/idle");
  EXPECT_EQ(h.gpu_usage("serving"), "2");
}

TEST(IdleReclaimTest, ActivityRestartsTheWindow) {
  Harness h(policy(kTenMinutes));
  h.running_ray_cluster("team-a", "rc", 2);
  const auto start = h.now;
  h.run_until(start + 6min, 0.0);
  h.run_until(start + 6min + 30s, 60.0);  // busy once
  h.run_until(start + 16min, 0.0);
  EXPECT_TRUE(h.with_rule("reclaim/idle").empty()) << h.explain("team-a/rc").dump();
  h.run_until(start + 17min, 0.0);
  EXPECT_EQ(h.with_rule("reclaim/idle").size(), 1u);
}

TEST(IdleReclaimTest, NoSamplesIsNotIdleUnlessThePolicySaysSo) {
  for (const char* missing : {"NotIdle", "Idle"}) {
    Harness h(policy("  idle: {window: 10m, missingData: " + std::string(missing) +
                     "}\n  gracePeriod: 0s\n  stabilizationWindow: 0s\n"));
    h.running_ray_cluster("team-a", "rc", 2);
    h.run_until(h.now + 30min, std::nullopt);  // ticks, no samples
    EXPECT_EQ(h.with_rule("reclaim/idle").size(), std::string(missing) == "Idle" ? 1u : 0u)
        << missing;
  }
}

TEST(IdleReclaimTest, TheOptOutAnnotationKeepsItRunning) {
  Harness h(policy(kTenMinutes));
  h.running_ray_cluster("team-a", "rc", 2, {{"gpuaas.io/idle-reclaim", "false"}});
  h.run_until(h.now + 40min, 0.0);
  EXPECT_TRUE(h.with_rule("reclaim/idle").empty());
}

TEST(IdleReclaimTest, NoReclaimBeforeTheMinimumRuntime) {
  Harness h(policy(kTenMinutes + "  minRuntime: 30m\n"));
  h.running_ray_cluster("team-a", "rc", 2);
  const auto start = h.now;
  h.run_until(start + 29min + 50s, 0.0);
  EXPECT_TRUE(h.with_rule("reclaim/idle").empty());
  h.run_until(start + 30min + 30s, 0.0);
  EXPECT_EQ(h.with_rule("reclaim/idle").size(), 1u);
}

TEST(IdleReclaimTest, KeepQuotaForExpiresThenAWakeQueuesItAgain) {
  Harness h(policy(kTenMinutes + "  keepQuotaFor: 20m\n  lendIdleQuota: false\n"));
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(h.now + 11min, 0.0);
  ASSERT_EQ(h.with_rule("reclaim/idle").size(), 1u);
  h.apply_last_patch("team-a", "rc");  // KubeRay removes the workers
  const auto zero = h.now;
  h.run_until(zero + 19min, std::nullopt);
  EXPECT_EQ(h.explain("team-a/rc")["reclaim"]["quota"], "Reserved");
  EXPECT_EQ(h.gpu_usage("serving"), "2");
  h.run_until(zero + 21min, std::nullopt);
  const json x = h.explain("team-a/rc");
  EXPECT_EQ(x["reclaim"]["state"], "Released") << x.dump();
  EXPECT_EQ(x["reason"], "QuotaReleased");
  EXPECT_EQ(h.gpu_usage("serving"), "0");
  // A job submitted to the cluster: Ray tasks wait for a node. It queues with its old demand and
  // comes back through admission, by scaling back.
  h.ray_tasks_waiting("team-a", "rc");
  const auto back = h.with_rule("admission/quota");
  ASSERT_EQ(back.size(), 2u) << h.explain("team-a/rc").dump();  // the first admission, and now
  EXPECT_EQ(back[1]["body"]["spec"]["workerGroupSpecs"][0]["replicas"], 1) << back[1].dump();
  EXPECT_EQ(h.gpu_usage("serving"), "2");
}

TEST(IdleReclaimTest, WakingWhileLentTakesTheQuotaBack) {
  Harness h(policy(kTenMinutes + "  keepQuotaFor: 1h\n  lendIdleQuota: true\n"));
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(h.now + 11min, 0.0);
  ASSERT_EQ(h.with_rule("reclaim/idle").size(), 1u);
  h.apply_last_patch("team-a", "rc");
  EXPECT_EQ(h.explain("team-a/rc")["reclaim"]["quota"], "Lent");
  EXPECT_EQ(h.gpu_usage("serving"), "0");
  // team-b's 7-GPU cluster fits only on what team-a lends (batch holds 4 of its own); when
  // team-a's 2 GPUs come back, 1 is missing: the borrower goes.
  h.submit_ray_cluster("team-b", "borrower", 7);
  ASSERT_TRUE(h.admitted("team-b", "borrower")) << h.explain("team-b/borrower").dump();
  h.apply_last_patch("team-b", "borrower");  // it runs
  h.ray_tasks_waiting("team-a", "rc");
  const auto lend = h.with_rule("reclaim/lend");
  ASSERT_EQ(lend.size(), 1u) << h.explain("team-a/rc").dump();
  EXPECT_EQ(lend[0]["target"]["name"], "borrower");
  // Usage is reserved quota: the borrower holds it until it is seen stopped, and only then does
  // team-a's cluster scale back (the choice Kueue makes for a preemptor).
  EXPECT_TRUE(h.with_rule("reclaim/wake").empty());
  auto x = h.explain("team-a/rc");
  EXPECT_EQ(x["state"], "Waking") << x.dump();
  EXPECT_EQ(x["reclaim"]["quota"], "Returning") << x.dump();
  EXPECT_NE(x["reclaim"]["reason"].get<std::string>().find("tasks waiting"), std::string::npos)
      << x.dump();
  EXPECT_EQ(h.gpu_usage("serving"), "0");
  h.apply_last_patch("team-b", "borrower");  // the borrower is suspended
  const auto wake = h.with_rule("reclaim/wake");
  ASSERT_EQ(wake.size(), 1u) << h.explain("team-a/rc").dump();
  EXPECT_EQ(wake[0]["body"]["spec"]["workerGroupSpecs"][0]["replicas"], 1);
  EXPECT_EQ(h.explain("team-a/rc")["state"], "Admitted");
  EXPECT_EQ(h.gpu_usage("serving"), "2");
}

TEST(IdleReclaimTest, FlappingActivityNeverReclaims) {
  Harness h(policy(kTenMinutes));
  h.running_ray_cluster("team-a", "rc", 2);
  const auto start = h.now;
  for (int i = 1; i <= 12; ++i) h.run_until(start + i * 5min, i % 2 ? 0.0 : 70.0);
  EXPECT_TRUE(h.with_rule("reclaim/idle").empty());
}

TEST(IdleReclaimTest, CooldownAfterAWake) {
  Harness h(
      policy("  idle: {window: 5m}\n  gracePeriod: 0s\n  stabilizationWindow: 0s\n"
             "  cooldown: 30m\n  keepQuotaFor: 2h\n"));
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(h.now + 6min, 0.0);
  ASSERT_EQ(h.with_rule("reclaim/idle").size(), 1u);
  h.apply_last_patch("team-a", "rc");
  h.ray_tasks_waiting("team-a", "rc");
  ASSERT_EQ(h.with_rule("reclaim/wake").size(), 1u);
  h.apply_last_patch("team-a", "rc");
  const auto woke = h.now;
  h.run_until(woke + 29min, 0.0);  // idle again at once, but cooling down
  EXPECT_EQ(h.with_rule("reclaim/idle").size(), 1u);
  h.run_until(woke + 31min, 0.0);
  EXPECT_EQ(h.with_rule("reclaim/idle").size(), 2u);
}

}  // namespace
}  // namespace gpuaas::core

namespace gpuaas::core {
namespace {

TEST(NotebookCullingTest, AnIdleNotebookIsStoppedItsQuotaReleasedAndItsUserStartsItAgain) {
  Harness h(test::cluster_policy() +
            "apiVersion: gpuaas.io/v1alpha1\nkind: NotebookPolicy\nmetadata: {name: nb}\n"
            "spec:\n  selector: {namespaces: [team-a]}\n"
            "  culling: {enabled: true, idleTime: 30m, gpuThreshold: 5, action: Stop}\n");
  h.publish(sim::Change::kAdded, test::gated_notebook("nb"));
  ASSERT_TRUE(h.admitted("team-a", "nb")) << h.explain("team-a/nb").dump();
  json nb = h.patched("team-a", "nb", test::gated_notebook("nb"));
  ASSERT_FALSE(nb["metadata"]["annotations"].contains("kubeflow-resource-stopped"));
  nb["status"] = {{"readyReplicas", 1}};
  h.publish(sim::Change::kModified, nb);
  h.publish(sim::Change::kAdded,
            Harness::owned_pod("team-a", "kubeflow.org/v1", "Notebook", "nb", "nb-0", 1));
  EXPECT_EQ(h.gpu_usage("serving"), "1");
  const auto start = h.now;
  while (h.now < start + 29min) {
    h.now += 1min;
    h.gpu_util("team-a", "nb-0", 1);
    h.tick();
  }
  EXPECT_TRUE(h.with_rule("reclaim/idle").empty());
  while (h.now < start + 32min) {
    h.now += 1min;
    h.gpu_util("team-a", "nb-0", 1);
    h.tick();
  }
  const auto cull = h.with_rule("reclaim/idle");
  ASSERT_EQ(cull.size(), 1u) << h.explain("team-a/nb").dump();
  EXPECT_TRUE(cull[0]["body"]["metadata"]["annotations"].contains("kubeflow-resource-stopped"));
  const json x = h.explain("team-a/nb");
  EXPECT_EQ(x["reclaim"]["state"], "Released") << x.dump();
  EXPECT_EQ(x["reclaim"]["rule"], "NotebookPolicy/nb");
  EXPECT_EQ(h.gpu_usage("serving"), "0");
  // The controller stops it; later its user starts it from the UI (the stop annotation goes).
  nb = h.patched("team-a", "nb", nb);
  nb["status"] = json::object();
  h.publish(sim::Change::kModified, nb);
  h.publish(sim::Change::kDeleted,
            Harness::owned_pod("team-a", "kubeflow.org/v1", "Notebook", "nb", "nb-0", 1));
  h.now += 1h;
  nb["metadata"]["annotations"].erase("kubeflow-resource-stopped");
  nb["metadata"]["resourceVersion"] = "100";
  h.publish(sim::Change::kModified, nb);
  // It queues again and, the quota being free, is admitted at once.
  EXPECT_EQ(h.with_rule("admission/quota").size(), 2u) << h.explain("team-a/nb").dump();
  EXPECT_EQ(h.gpu_usage("serving"), "1");
}

}  // namespace
}  // namespace gpuaas::core
