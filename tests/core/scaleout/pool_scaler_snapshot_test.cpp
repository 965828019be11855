// PoolScaler through a snapshot. On the scale-in tests' hand-made cluster model: a copy restored
// from the original's snapshot (set_policy, then load_state) at several points gets the same
// passes as the original from then on and must return the same actions, JSON, metrics and
// snapshot bytes. Through gpuaasd in the simulator (the scale-out tests' scenarios): a run whose
// scaler is replaced before every pass by one restored from its snapshot must report exactly what
// the uninterrupted run reports. A snapshot cut short fails to load with a message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/base/archive.hpp"
#include "gpuaas/sim/report.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"
#include "pool_scaler.hpp"
#include "scale_in_model.hpp"
#include "sim_test_support.hpp"
#include "snapshot_trace.hpp"

namespace gpuaas::core::scaleout {
namespace {

using nlohmann::json;
using sim::testing::scenario_of;
using std::chrono::seconds;
using wire::EventTime;

// How the shared snapshot checks (snapshot_trace.hpp) reach a scaler.
struct ScalerSnapshots {
  using Object = PoolScaler;
  static PoolScaler::PassHook& hook() { return PoolScaler::pass_hook(); }
  static PoolScaler fresh() { return PoolScaler(); }
  static void adopt(PoolScaler& live, PoolScaler&& restored) {
    live.adopt_state(std::move(restored));
  }
};

std::string snapshot(const PoolScaler& s) {
  base::ArchiveWriter w;
  s.save_state(w);
  return w.take();
}

std::string text(const PoolScaler::Output& out) {
  std::string s;
  for (const auto& a : out.actions) s += a.DebugString() + "\n";
  return s + std::to_string(out.evictions.size());
}

class PoolScalerSnapshotTest : public test::ScaleInModel {
 protected:
  void SetUp() override {
    use_policy(test::pool_policy(1));
    if (HasFatalFailure()) return;
    original_.set_policy(*set_);
  }
  // A copy of the original, restored from its snapshot into a fresh scaler.
  void restore() {
    const std::string bytes = snapshot(original_);
    copy_.reset();
    copy_registry_ = std::make_unique<telemetry::Registry>();
    copy_ = std::make_unique<PoolScaler>(copy_registry_.get());
    copy_->set_policy(*set_);
    base::ArchiveReader r(bytes);
    copy_->load_state(r);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_TRUE(r.done());
    EXPECT_EQ(snapshot(*copy_), bytes);
    ++restores_;
  }
  // Passes every scan interval for `span`, to the original and the copy alike.
  void run_for(seconds span) {
    for (EventTime end = now_ + span; now_ <= end; now_ += PoolScaler::kScanInterval) {
      model_.advance(now_);
      const bool due = original_.due(now_);
      if (copy_) {
        ASSERT_EQ(copy_->due(now_), due);
      }
      if (!due) continue;
      const auto a = original_.pass(model_, *scheduler_, {}, now_);
      actions_ += static_cast<int>(a.actions.size());
      if (!copy_) continue;
      const auto b = copy_->pass(model_, *scheduler_, {}, now_);
      ASSERT_EQ(text(a), text(b));
      ASSERT_EQ(original_.json(now_), copy_->json(now_));
      ASSERT_EQ(original_.coming_gpus(), copy_->coming_gpus());
      for (const auto& [name, n] : model_.nodes())
        ASSERT_EQ(original_.cordoned(name), copy_->cordoned(name)) << name;
      ASSERT_EQ(snapshot(original_), snapshot(*copy_));
      ASSERT_EQ(telemetry::TextSerializer().Serialize(registry_.Collect()),
                telemetry::TextSerializer().Serialize(copy_registry_->Collect()));
    }
  }

  telemetry::Registry registry_;
  PoolScaler original_{&registry_};
  std::unique_ptr<telemetry::Registry> copy_registry_;
  std::unique_ptr<PoolScaler> copy_;
  int restores_ = 0;
  int actions_ = 0;
};

// Unneeded nodes, a drain held by a PodDisruptionBudget, cordons, removals, nodes that leave;
// restored at several points of it.
TEST_F(PoolScalerSnapshotTest, ScaleInDecidesTheSameAfterARestore) {
  node("empty");
  node("disabled", {{"cluster-autoscaler.kubernetes.io/scale-down-disabled", "true"}});
  node("spare");
  pod("cache-0", "spare", {{"cluster-autoscaler.kubernetes.io/safe-to-evict", "true"}});
  budget(0);
  run_for(seconds(5));  // the first look
  restore();
  run_for(seconds(40));
  restore();
  run_for(seconds(60));  // "empty" goes
  restore();
  run_for(seconds(120));  // the drain of "spare" waits for its budget
  budget(1);
  run_for(seconds(10));
  restore();
  run_for(seconds(30));
  add({{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "empty"}}}},
      wire::ChangeType::kDeleted);
  restore();
  run_for(seconds(700));  // past the drain timeout
  EXPECT_EQ(restores_, 5);
  EXPECT_GT(actions_, 3);
}

// Every prefix of a snapshot fails to load, with a message; under another policy it fails too.
TEST_F(PoolScalerSnapshotTest, ASnapshotCutShortFailsWithAMessage) {
  node("empty");
  node("spare");
  pod("cache-0", "spare", {{"cluster-autoscaler.kubernetes.io/safe-to-evict", "true"}});
  budget(0);
  run_for(seconds(200));
  const std::string bytes = snapshot(original_);
  core::test::expect_every_prefix_fails<ScalerSnapshots>(bytes, *set_);
  if (HasFatalFailure()) return;
  PoolScaler none;  // no pools
  base::ArchiveReader r(bytes);
  none.load_state(r);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("node pools"), std::string::npos) << r.error();
}

// The simulator's report without the wall-clock figure.
std::string report_of(const sim::RunResult& r) {
  json j = json::parse(sim::report_json(r));
  j.erase("wall_seconds");
  return j.dump();
}

// Through gpuaasd: a plain run, and one whose scaler is replaced before every pass by one
// restored from its snapshot; their reports are the one view. Returns the plain run's report.
std::string expect_transparent(const sim::Scenario& s, int min_restores) {
  const core::test::SnapshotTrace plain = core::test::expect_same_runs<ScalerSnapshots>(
      [&](core::test::SnapshotTrace& t) {
        auto r = sim::run_simulation(s, sim::testing::options_for(sim::Baseline::kGpuaas));
        EXPECT_TRUE(r.is_ok()) << r.status().message();
        if (r.is_ok()) t.views.push_back(report_of(*r));
      },
      min_restores);
  return plain.views.empty() ? "" : plain.views.front();
}

// The decisions a run's report counts under `rule`.
int64_t rule_count(const std::string& report, const std::string& rule) {
  const json j = json::parse(report, nullptr, false);
  if (!j.is_object()) return 0;
  return j["decisions"]["actions_by_rule"].value(rule, int64_t{0});
}

// Nodes whose GPUs come late, learned provisioning time, jobs waiting for nodes, scale-in.
TEST(PoolScalerSnapshotSimTest, LateGpusAndLearnedProvisioningAfterEveryRestore) {
  const std::string r = expect_transparent(scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
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
    - {name: more, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 2, gpusPerPod: 4,
       submitAt: 50m, duration: 40m, count: 3, every: 10m}
)"),
                                           300);
  EXPECT_GT(rule_count(r, "scaleout/backlog"), 0) << r;
  EXPECT_GT(rule_count(r, "scalein/unneeded"), 0);
}

// Nodes that never become Ready: given up on, backoff doubling, replacements.
TEST(PoolScalerSnapshotSimTest, GiveUpsAndBackoffAfterEveryRestore) {
  const std::string r = expect_transparent(scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: chaos}
spec:
  duration: 4h
  nodePools:
    - {name: h100, flavor: h100, gpusPerNode: 8, nodes: 1, minNodes: 1, maxNodes: 8,
       provisioningTime: 5m, failProvisioning: true}
  workloads:
    - {name: long, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 8,
       duration: 4h}
    - {name: wait, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 2, gpusPerPod: 8,
       duration: 1h}
)"),
                                           300);
  EXPECT_GT(rule_count(r, "scaleout/giveUp"), 0) << r;
}

// Deadlines, and scale-in once the work is done.
TEST(PoolScalerSnapshotSimTest, DeadlinesAndScaleInAfterEveryRestore) {
  const std::string r = expect_transparent(scenario_of(R"(apiVersion: gpuaas.io/v1alpha1
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
    - {name: sweep, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 2,
       submitAt: 30m, duration: 20m, count: 12, every: 3m}
)"),
                                           300);
  EXPECT_GT(rule_count(r, "scaleout/deadline"), 0) << r;
}

// The bursty demo: the demand trend asks for nodes ahead of the sweeps (rule scaleout/forecast).
TEST(PoolScalerSnapshotSimTest, TheDemandTrendForecastsTheSameAfterEveryRestore) {
  auto s = sim::load_scenario(GPUAAS_SOURCE_DIR "/deploy/demo/scaleout/scenario.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const std::string r = expect_transparent(*s, 300);
  EXPECT_GT(rule_count(r, "scaleout/forecast"), 0) << r;
}

}  // namespace
}  // namespace gpuaas::core::scaleout
