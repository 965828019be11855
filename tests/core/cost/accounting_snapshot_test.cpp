// GpuAccounting and its ledger through a snapshot: the accounting tests' scenarios run twice
// through gpuaasd, once as they are and once with the accounting replaced before every update by
// a fresh object (set_policy, then load_state) read from the snapshot just written, as a
// restarted daemon would build it. Both runs must give the same report (all time and windows),
// the same accounting figures on /metrics, and the same snapshot bytes at every update. A
// snapshot cut short fails to load with a message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "gpu_accounting.hpp"
#include "harness_objects.hpp"
#include "reclaim_harness.hpp"
#include "snapshot_trace.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using cost::GpuAccounting;
using nlohmann::json;
using test::Harness;

using test::seen;
using Trace = test::SnapshotTrace;

// The accounting's state is adopted, so the daemon's metrics stay.
struct AccountingSnapshots {
  using Object = GpuAccounting;
  static GpuAccounting::UpdateHook& hook() { return GpuAccounting::update_hook(); }
  static GpuAccounting fresh() { return GpuAccounting(nullptr); }
  static void adopt(GpuAccounting& live, GpuAccounting&& restored) {
    live.adopt_state(std::move(restored));
  }
};

// The accounting's families on /metrics.
std::string accounting_metrics(const Harness& h) {
  std::ostringstream out;
  std::istringstream in(h.metrics_text());
  for (std::string line; std::getline(in, line);) {
    for (const char* family :
         {"gpuaas_gpu_allocated_seconds_total", "gpuaas_gpu_busy_seconds_total",
          "gpuaas_gpu_idle_reserved_seconds_total", "gpuaas_gpu_capacity_seconds_total",
          "gpuaas_cost_total", "gpuaas_idle_cluster_cost_total", "gpuaas_outcomes_total",
          "gpuaas_gpu_hour_price"})
      if (line.rfind(family, 0) == 0) out << line << "\n";
  }
  return out.str();
}

void checkpoint(Harness& h, Trace& t) {
  t.views.push_back(h.report().dump());
  t.views.push_back(h.report("600").dump());
  t.views.push_back(h.report("7200").dump());
  t.views.push_back(accounting_metrics(h));
  t.views.push_back(json(h.actions()).dump());
}

const std::string kPrice =
    "apiVersion: gpuaas.io/v1alpha1\nkind: CostModel\nmetadata: {name: prices}\n"
    "spec:\n  currency: EUR\n  flavors:\n  - {name: l40s, pricePerGPUHour: 3}\n"
    "  outcomes:\n    inference: {latencyMetric: request_latency, latencyUnit: ms, "
    "latencyObjective: 500ms}\n---\n";
const std::string kIdle =
    "apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: idle}\n"
    "spec:\n  selector: {kinds: [RayCluster]}\n  idle: {window: 10m}\n"
    "  gracePeriod: 0s\n  stabilizationWindow: 0s\n  cooldown: 0s\n"
    "  keepQuotaFor: 2h\n  lendIdleQuota: false\n---\n";

// Busy and idle GPUs, inference answers, a reservation at zero, a job that succeeds, a notebook
// session; long enough for several of the ledger's 5-minute snapshots and an idle series drop.
void a_mixed_hour(Harness& h, Trace& t) {
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(t0 + 3min, 50.0);
  checkpoint(h, t);
  h.request_latencies("team-a", "rc-gpu-worker-x1", 10, 40, 50);
  h.run_until(t0 + 8min, 0.0);
  h.request_latencies("team-a", "rc-gpu-worker-x1", 30, 100, 130);
  h.run_until(t0 + 11min, 0.0);  // idle for 10 min: to zero, quota reserved
  h.apply_last_patch("team-a", "rc");
  checkpoint(h, t);
  // A job in batch: admitted, runs, succeeds (twice reported).
  h.publish(sim::Change::kAdded, test::batch_job("train", 4, true));
  json running = test::batch_job("train", 4, false);
  running["metadata"]["resourceVersion"] = "2";
  running["status"] = {{"active", 1}};
  h.publish(sim::Change::kModified, running);
  json pod = Harness::owned_pod("team-b", "batch/v1", "Job", "train", "train-abcde", 4);
  h.publish(sim::Change::kAdded, pod);
  h.run_until(h.now + 20min, std::nullopt);
  for (int i = 0; i < 3; ++i) {
    h.now += 1min;
    h.gpu_util("team-b", "train-abcde", 80);
    h.tick();
  }
  checkpoint(h, t);
  json done = running;
  done["metadata"]["resourceVersion"] = "3";
  done["status"] = {{"succeeded", 1}, {"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  h.publish(sim::Change::kModified, done);
  pod["status"]["phase"] = "Succeeded";
  h.publish(sim::Change::kModified, pod);
  // A notebook session, busy for a while.
  const json nb = test::notebook("alice");
  h.publish(sim::Change::kAdded, nb);
  const json nb_pod =
      Harness::owned_pod("team-a", "kubeflow.org/v1", "Notebook", "alice", "alice-0", 1);
  h.publish(sim::Change::kAdded, nb_pod);
  for (int i = 0; i < 5; ++i) {
    h.now += 1min;
    h.gpu_util("team-a", "alice-0", 40);
    h.tick();
  }
  h.publish(sim::Change::kDeleted, nb_pod);
  checkpoint(h, t);
  // The woken cluster runs again; then long quiet hours (the ended pods' series drop).
  h.ray_tasks_waiting("team-a", "rc");
  h.apply_last_patch("team-a", "rc");
  h.run_until(h.now + 2h, 20.0);
  checkpoint(h, t);
}

TEST(AccountingSnapshotTest, ReportsAndMetricsAreTheSameAfterEveryRestore) {
  const Trace t = test::expect_transparent<AccountingSnapshots>(
      test::cluster_policy() + kPrice + kIdle, a_mixed_hour, 200);
  for (const char* figure : {"\"jobs\":1.0", "\"notebooks\":1.0", "\"inference_requests\":100.0",
                             "\"idle_reserved\":0.8672", "gpuaas_gpu_busy_seconds_total{"})
    EXPECT_TRUE(seen(t, figure)) << figure;
}

// minNodes asks for a second node, which never registers: given up on, asked again.
void a_pool_that_never_grows(Harness& h, Trace& t) {
  h.running_ray_cluster("team-a", "rc", 2);
  for (int i = 0; i < 4; ++i) {
    h.run_until(h.now + 10min, 30.0);
    checkpoint(h, t);
  }
}

// A NodePool's price, and the nodes it asked for billed as capacity while provisioned.
TEST(AccountingSnapshotTest, NodePoolPricesAndComingNodesAreTheSameAfterEveryRestore) {
  const std::string pool =
      "apiVersion: gpuaas.io/v1alpha1\nkind: NodePool\nmetadata: {name: l40s-pool}\n"
      "spec: {flavor: l40s, gpusPerNode: 8, minNodes: 2, maxNodes: 4, pricePerNodeHour: 16,\n"
      "       nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}}\n---\n";
  const Trace t = test::expect_transparent<AccountingSnapshots>(test::cluster_policy() + pool,
                                                                a_pool_that_never_grows, 50);
  // The node's 8 GPUs for 40 minutes (5.33 GPU-hours) and the asked-for node's while it was
  // coming.
  EXPECT_TRUE(seen(t, "\"capacity_gpu_hours\":9.3333")) << t.views.front();
  EXPECT_TRUE(seen(t, "\"price_source\":\"NodePool\""));
}

// Every prefix of a snapshot fails to load, with a message; the whole of it loads.
TEST(AccountingSnapshotTest, ASnapshotCutShortFailsWithAMessage) {
  Trace plain;
  {
    test::SnapshotRoundTrips<AccountingSnapshots> hook(plain, false);
    Harness h(test::cluster_policy() + kPrice + kIdle);
    h.running_ray_cluster("team-a", "rc", 2);
    h.run_until(h.now + 12min, 0.0);
    h.apply_last_patch("team-a", "rc");
    h.run_until(h.now + 10min, std::nullopt);
  }
  ASSERT_TRUE(plain.policy);
  const std::string bytes = plain.snapshots.back();
  test::expect_every_prefix_fails<AccountingSnapshots>(bytes, *plain.policy);
  if (HasFatalFailure()) return;
  test::expect_loads<AccountingSnapshots>(bytes, *plain.policy);
}

}  // namespace
}  // namespace gpuaas::core
