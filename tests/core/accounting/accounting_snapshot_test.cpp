// GpuAccounting and its ledger through a snapshot: the accounting tests' scenarios run twice
// through gpuaasd, once as they are and once with the accounting replaced before every update by
// a fresh object (set_policy, then load_state) read from the snapshot just written, as a
// restarted daemon would build it. Both runs must give the same report (all time and windows),
// the same accounting figures on /metrics, and the same snapshot bytes at every update. A
// snapshot cut short fails to load with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "gpu_accounting.hpp"
#include "gpuaas/base/archive.hpp"
#include "reclaim_harness.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using accounting::GpuAccounting;
using nlohmann::json;
using test::Harness;

struct Trace {
  std::vector<std::string> views;      // reports and metrics at the scenario's checkpoints
  std::vector<std::string> snapshots;  // the accounting's snapshot before every update
  int restored = 0;
  int copies_differ = 0;  // restored objects whose own snapshot is not the bytes they came from
  std::string error;
  std::optional<policy::PolicySet> policy;
};

// Before every update: records the snapshot; with `restore`, replaces the accounting's state by
// a fresh object's loaded from it (the daemon's metrics stay). Declared before the Harness.
class RoundTrips {
 public:
  RoundTrips(Trace& t, bool restore) {
    GpuAccounting::update_hook() = [&t, restore](GpuAccounting& acc, const policy::PolicySet& set) {
      base::ArchiveWriter w;
      acc.save_state(w);
      const std::string bytes = w.take();
      t.snapshots.push_back(bytes);
      t.policy = set;
      if (!restore) return;
      GpuAccounting copy(nullptr);
      copy.set_policy(set);
      base::ArchiveReader r(bytes);
      copy.load_state(r);
      if (!r.ok() || !r.done()) {
        t.error = r.ok() ? "bytes left over" : r.error();
        return;
      }
      base::ArchiveWriter again;
      copy.save_state(again);
      if (again.take() != bytes) ++t.copies_differ;
      acc.adopt_state(std::move(copy));
      ++t.restored;
    };
  }
  ~RoundTrips() { GpuAccounting::update_hook() = nullptr; }
  RoundTrips(const RoundTrips&) = delete;
  RoundTrips& operator=(const RoundTrips&) = delete;
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

using Scenario = void (*)(Harness&, Trace&);

// Both runs of one scenario; the restored one must match. Returns the plain run's trace.
Trace expect_transparent(const std::string& policy, Scenario scenario, int min_restores) {
  Trace plain, restored;
  {
    RoundTrips hook(plain, false);
    Harness h(policy);
    scenario(h, plain);
  }
  {
    RoundTrips hook(restored, true);
    Harness h(policy);
    scenario(h, restored);
  }
  EXPECT_EQ(restored.error, "");
  EXPECT_GE(restored.restored, min_restores);
  EXPECT_EQ(restored.copies_differ, 0);
  EXPECT_EQ(plain.views.size(), restored.views.size());
  for (std::size_t i = 0; i < std::min(plain.views.size(), restored.views.size()); ++i)
    EXPECT_EQ(plain.views[i], restored.views[i]) << "checkpoint view " << i;
  EXPECT_EQ(plain.snapshots.size(), restored.snapshots.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < std::min(plain.snapshots.size(), restored.snapshots.size()); ++i)
    differ += plain.snapshots[i] != restored.snapshots[i];
  EXPECT_EQ(differ, 0u) << "of " << plain.snapshots.size() << " snapshots";
  return plain;
}

// Whether any checkpoint view holds `text` (the scenario reached what the test covers).
bool seen(const Trace& t, const std::string& text) {
  for (const auto& v : t.views)
    if (v.find(text) != std::string::npos) return true;
  return false;
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

json job(const std::string& name, int gpus, bool suspend) {
  json container = {{"name", "main"},
                    {"image", "busybox"},
                    {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", "team-b"},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec",
           {{"suspend", suspend},
            {"parallelism", 1},
            {"completions", 1},
            {"template",
             {{"spec", {{"restartPolicy", "Never"}, {"containers", json::array({container})}}}}}}}};
}

// Busy and idle GPUs, inference answers, a reservation at zero, a job that succeeds, a notebook
// session; long enough for several of the ledger's 5-minute snapshots and an idle series drop.
void a_mixed_hour(Harness& h, Trace& t) {
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(t0 + 3min, 50.0);
  checkpoint(h, t);
  auto scrape = [&](double at_250, double at_500, double all) {
    std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, double>> s;
    for (const auto& [le, v] : std::vector<std::pair<std::string, double>>{
             {"250", at_250}, {"500", at_500}, {"1000", all}, {"+Inf", all}})
      s.push_back({{{"namespace", "team-a"}, {"pod", "rc-gpu-worker-x1"}, {"le", le}}, v});
    h.samples("team-a", s, "request_latency_bucket");
  };
  scrape(10, 40, 50);
  h.run_until(t0 + 8min, 0.0);
  scrape(30, 100, 130);
  h.run_until(t0 + 11min, 0.0);  // idle for 10 min: to zero, quota reserved
  h.apply_last_patch("team-a", "rc");
  checkpoint(h, t);
  // A job in batch: admitted, runs, succeeds (twice reported).
  h.publish(sim::Change::kAdded, job("train", 4, true));
  json running = job("train", 4, false);
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
  const json nb = {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "Notebook"},
      {"metadata",
       {{"name", "alice"},
        {"namespace", "team-a"},
        {"uid", "uid-alice"},
        {"resourceVersion", "1"}}},
      {"spec",
       {{"template",
         {{"spec",
           {{"containers",
             json::array({{{"name", "alice"},
                           {"image", "jupyter"},
                           {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}}}}}};
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
  const Trace t = expect_transparent(test::cluster_policy() + kPrice + kIdle, a_mixed_hour, 200);
  for (const char* figure : {"\"jobs\":1.0", "\"notebooks\":1.0", "\"inference_requests\":100.0",
                             "\"idle_reserved\":0.8672", "gpuaas_gpu_busy_seconds_total{"})
    EXPECT_TRUE(seen(t, figure)) << figure;
}

// A NodePool's price, and the nodes it asked for billed as capacity while provisioned.
TEST(AccountingSnapshotTest, NodePoolPricesAndComingNodesAreTheSameAfterEveryRestore) {
  const std::string pool =
      "apiVersion: gpuaas.io/v1alpha1\nkind: NodePool\nmetadata: {name: l40s-pool}\n"
      "spec: {flavor: l40s, gpusPerNode: 8, minNodes: 2, maxNodes: 4, pricePerNodeHour: 16,\n"
      "       nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}}\n---\n";
  const Trace t = expect_transparent(
      test::cluster_policy() + pool,
      [](Harness& h, Trace& trace) {
        // minNodes asks for a second node, which never registers: given up on, asked again.
        h.running_ray_cluster("team-a", "rc", 2);
        for (int i = 0; i < 4; ++i) {
          h.run_until(h.now + 10min, 30.0);
          checkpoint(h, trace);
        }
      },
      50);
  // The node's 8 GPUs for 40 minutes (5.33 GPU-hours) and the asked-for node's while it was
  // coming.
  EXPECT_TRUE(seen(t, "\"capacity_gpu_hours\":9.3333")) << t.views.front();
  EXPECT_TRUE(seen(t, "\"price_source\":\"NodePool\""));
}

// Every prefix of a snapshot fails to load, with a message; the whole of it loads.
TEST(AccountingSnapshotTest, ASnapshotCutShortFailsWithAMessage) {
  Trace plain;
  {
    RoundTrips hook(plain, false);
    Harness h(test::cluster_policy() + kPrice + kIdle);
    h.running_ray_cluster("team-a", "rc", 2);
    h.run_until(h.now + 12min, 0.0);
    h.apply_last_patch("team-a", "rc");
    h.run_until(h.now + 10min, std::nullopt);
  }
  ASSERT_TRUE(plain.policy);
  const std::string bytes = plain.snapshots.back();
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    GpuAccounting acc(nullptr);
    acc.set_policy(*plain.policy);
    base::ArchiveReader r(std::string_view(bytes).substr(0, cut));
    acc.load_state(r);
    ASSERT_FALSE(r.ok()) << "cut at " << cut << " of " << bytes.size();
    ASSERT_FALSE(r.error().empty());
  }
  GpuAccounting acc(nullptr);
  acc.set_policy(*plain.policy);
  base::ArchiveReader r(bytes);
  acc.load_state(r);
  EXPECT_TRUE(r.ok() && r.done()) << r.error();
}

}  // namespace
}  // namespace gpuaas::core
