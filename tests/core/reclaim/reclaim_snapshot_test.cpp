// ReclaimBook through a snapshot: the reclaim harness's scenarios run twice through gpuaasd,
// once as they are and once with the book replaced at every reclaim pass by a fresh book
// (set_policy, then load_state) read from the snapshot just written, as a restarted daemon would
// build it. Both runs must publish the same actions and explain, and the book's snapshot must be
// the same bytes at every pass. A snapshot cut short fails to load with a message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/base/archive.hpp"
#include "harness_objects.hpp"
#include "reclaim/reclaim_book.hpp"
#include "reclaim_harness.hpp"
#include "snapshot_trace.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::Harness;

using test::seen;
using Trace = test::SnapshotTrace;

struct BookSnapshots {
  using Object = ReclaimBook;
  static ReclaimBook::PassHook& hook() { return ReclaimBook::pass_hook(); }
  static ReclaimBook fresh() { return ReclaimBook(); }
  static void adopt(ReclaimBook& live, ReclaimBook&& restored) { live = std::move(restored); }
};

void checkpoint(Harness& h, Trace& t, const std::vector<std::string>& workloads) {
  t.views.push_back(json(h.actions()).dump());
  for (const auto& w : workloads) t.views.push_back(h.explain(w).dump());
  t.views.push_back(h.gpu_usage("serving") + "/" + h.gpu_usage("batch"));
}

std::string idle_policy(const std::string& spec) {
  return test::cluster_policy() +
         "apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: idle}\n"
         "spec:\n  selector: {kinds: [RayCluster]}\n" +
         spec;
}

// To zero with its quota lent, a borrower preempted by the wake (which waits for it to stop),
// idle again, the reservation ends, woken through admission.
void lend_wake_release(Harness& h, Trace& t) {
  const std::vector<std::string> w = {"team-a/rc", "team-b/borrower"};
  h.running_ray_cluster("team-a", "rc", 2);
  checkpoint(h, t, w);
  h.run_until(h.now + 11min, 0.0);
  h.apply_last_patch("team-a", "rc");
  checkpoint(h, t, w);
  h.submit_ray_cluster("team-b", "borrower", 7);
  h.apply_last_patch("team-b", "borrower");
  h.ray_tasks_waiting("team-a", "rc");
  checkpoint(h, t, w);                       // waking: the borrower must stop first
  h.apply_last_patch("team-b", "borrower");  // it is suspended; rc is admitted back
  h.apply_last_patch("team-a", "rc");
  checkpoint(h, t, w);
  h.run_until(h.now + 12min, 0.0);
  h.apply_last_patch("team-a", "rc");
  checkpoint(h, t, w);
  h.run_until(h.now + 25min, std::nullopt);
  checkpoint(h, t, w);
  h.ray_tasks_waiting("team-a", "rc");
  h.apply_last_patch("team-a", "rc");
  h.run_until(h.now + 5min, 10.0);
  checkpoint(h, t, w);
}

TEST(ReclaimSnapshotTest, LendWakeAndReleaseDecideTheSameAfterEveryRestore) {
  const Trace t = test::expect_transparent<BookSnapshots>(
      idle_policy("  idle: {window: 10m}\n  gracePeriod: 0s\n"
                  "  stabilizationWindow: 0s\n  cooldown: 5m\n"
                  "  keepQuotaFor: 20m\n  lendIdleQuota: true\n"),
      lend_wake_release, 50);
  for (const char* state : {"\"quota\":\"Lent\"", "\"state\":\"Released\"", "\"state\":\"Waking\"",
                            "reclaim/lend", "reclaim/wake"})
    EXPECT_TRUE(seen(t, state)) << state;
}

// learnArrivals: Ray tasks arrive at uneven gaps; the timeout and the rule's budget are learned.
void arrivals(Harness& h, Trace& t) {
  const std::vector<std::string> w = {"team-a/rc"};
  h.running_ray_cluster("team-a", "rc", 2);
  const std::chrono::seconds gaps[] = {40s, 70s, 45s, 200s, 50s, 65s, 300s, 55s, 90s, 400s};
  for (int round = 0; round < 2; ++round) {
    for (const auto gap : gaps) {
      h.run_until(h.now + gap, 0.0);
      h.apply_last_patch("team-a", "rc");  // to zero if it was sent there
      h.ray_tasks_waiting("team-a", "rc");
      h.apply_last_patch("team-a", "rc");
      checkpoint(h, t, w);
    }
    h.run_until(h.now + 20min, 0.0);
    h.apply_last_patch("team-a", "rc");
    checkpoint(h, t, w);
  }
}

TEST(ReclaimSnapshotTest, LearnedTimeoutsAndBudgetsSurviveEveryRestore) {
  const Trace t = test::expect_transparent<BookSnapshots>(
      idle_policy("  idle: {window: 60s, requests: true, learnArrivals: true, "
                  "coldStartCost: 20s}\n  gracePeriod: 30s\n  cooldown: 0s\n"
                  "  keepQuotaFor: 10m\n"),
      arrivals, 100);
  // It learned a timeout other than Knative's, and went to zero and woke on it.
  EXPECT_TRUE(seen(t, "\"learned\":true,"));
  EXPECT_TRUE(seen(t, "\"timeout_seconds\":30,") || seen(t, "\"timeout_seconds\":30}"));
  EXPECT_TRUE(seen(t, "timeout 30s learned; cold starts so far"));
}

// A gated notebook: admitted, culled with its quota released, started again by its user.
void notebook_culling(Harness& h, Trace& t) {
  const std::vector<std::string> w = {"team-a/nb"};
  h.publish(sim::Change::kAdded, test::gated_notebook("nb"));
  json nb = h.patched("team-a", "nb", test::gated_notebook("nb"));
  nb["status"] = {{"readyReplicas", 1}};
  h.publish(sim::Change::kModified, nb);
  h.publish(sim::Change::kAdded,
            Harness::owned_pod("team-a", "kubeflow.org/v1", "Notebook", "nb", "nb-0", 1));
  checkpoint(h, t, w);
  const auto start = h.now;
  while (h.now < start + 32min) {
    h.now += 1min;
    h.gpu_util("team-a", "nb-0", 1);
    h.tick();
  }
  checkpoint(h, t, w);
  nb = h.patched("team-a", "nb", nb);
  nb["status"] = json::object();
  h.publish(sim::Change::kModified, nb);
  h.publish(sim::Change::kDeleted,
            Harness::owned_pod("team-a", "kubeflow.org/v1", "Notebook", "nb", "nb-0", 1));
  h.now += 1h;
  h.tick();
  nb["metadata"]["annotations"].erase("kubeflow-resource-stopped");
  nb["metadata"]["resourceVersion"] = "100";
  h.publish(sim::Change::kModified, nb);
  checkpoint(h, t, w);
}

TEST(ReclaimSnapshotTest, NotebookCullingDecidesTheSameAfterEveryRestore) {
  const Trace t = test::expect_transparent<BookSnapshots>(
      test::cluster_policy() +
          "apiVersion: gpuaas.io/v1alpha1\nkind: NotebookPolicy\nmetadata: {name: nb}\n"
          "spec:\n  selector: {namespaces: [team-a]}\n"
          "  culling: {enabled: true, idleTime: 30m, gpuThreshold: 5, action: Stop}\n",
      notebook_culling, 20);
  EXPECT_TRUE(seen(t, "\"rule\":\"NotebookPolicy/nb\",\"state\":\"Released\""));
}

// Every prefix of a snapshot fails to load, with a message; the whole of it loads.
TEST(ReclaimSnapshotTest, ASnapshotCutShortFailsWithAMessage) {
  Trace plain;
  {
    test::SnapshotRoundTrips<BookSnapshots> hook(plain, false);
    Harness h(
        idle_policy("  idle: {window: 60s, requests: true, learnArrivals: true, "
                    "coldStartCost: 20s}\n  gracePeriod: 30s\n  keepQuotaFor: 10m\n"));
    lend_wake_release(h, plain);
  }
  ASSERT_FALSE(plain.snapshots.empty());
  ASSERT_TRUE(plain.policy);
  std::string bytes;  // the largest snapshot of the run
  for (const auto& b : plain.snapshots)
    if (b.size() > bytes.size()) bytes = b;
  test::expect_every_prefix_fails<BookSnapshots>(bytes, *plain.policy);
  if (HasFatalFailure()) return;
  test::expect_loads<BookSnapshots>(bytes, *plain.policy);
  // A book under another policy (no such rule) refuses it.
  ReclaimBook other;
  base::ArchiveReader r2(bytes);
  other.load_state(r2);
  EXPECT_FALSE(r2.ok());
  EXPECT_NE(r2.error().find("reclaim rules"), std::string::npos) << r2.error();
}

}  // namespace
}  // namespace gpuaas::core
