// Idle reclaim, node scale-out and GPU accounting through snapshots together, in the simulator:
// inference services whose idle timeouts are learned from their requests (the serving replay's
// IdleReclaimPolicy), a batch job that waits for a node, a NodePool that buys and removes nodes,
// and gpuaasd's cost report. The run is played twice; in the second, the reclaim book, the pool
// scaler and the accounting are each replaced before every use by a fresh object restored from
// the snapshot just written. The simulator's report (daemon report included) must be the same.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/gpu_accounting.hpp"
#include "gpuaas/base/archive.hpp"
#include "gpuaas/sim/report.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "reclaim/reclaim_book.hpp"
#include "scaleout/pool_scaler.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

struct Counts {
  int restored = 0;
  int copies_differ = 0;  // restored objects whose own snapshot is not the bytes they came from
  std::string error;
};

template <typename T>
std::string snapshot_of(const T& x) {
  base::ArchiveWriter w;
  x.save_state(w);
  return w.take();
}

// A fresh T (set_policy, load_state) from `bytes`; nullopt (and the error in `c`) on a failure.
template <typename T, typename... Args>
std::unique_ptr<T> restored(const std::string& bytes, const policy::PolicySet& set, Counts& c,
                            Args... args) {
  auto copy = std::make_unique<T>(args...);
  copy->set_policy(set);
  base::ArchiveReader r(bytes);
  copy->load_state(r);
  if (!r.ok() || !r.done()) {
    c.error = r.ok() ? "bytes left over" : r.error();
    return nullptr;
  }
  if (snapshot_of(*copy) != bytes) ++c.copies_differ;
  ++c.restored;
  return copy;
}

// Installs the three round trips for the scope's life.
class AllRoundTrips {
 public:
  explicit AllRoundTrips(Counts& c) {
    ReclaimBook::pass_hook() = [&c](ReclaimBook& book, const policy::PolicySet& set) {
      if (auto copy = restored<ReclaimBook>(snapshot_of(book), set, c)) book = std::move(*copy);
    };
    scaleout::PoolScaler::pass_hook() = [&c](scaleout::PoolScaler& s,
                                             const policy::PolicySet& set) {
      if (auto copy = restored<scaleout::PoolScaler>(snapshot_of(s), set, c))
        s.adopt_state(std::move(*copy));
    };
    cost::GpuAccounting::update_hook() = [&c](cost::GpuAccounting& a,
                                              const policy::PolicySet& set) {
      if (auto copy = restored<cost::GpuAccounting>(snapshot_of(a), set, c,
                                                    static_cast<telemetry::Registry*>(nullptr)))
        a.adopt_state(std::move(*copy));
    };
  }
  ~AllRoundTrips() {
    ReclaimBook::pass_hook() = nullptr;
    scaleout::PoolScaler::pass_hook() = nullptr;
    cost::GpuAccounting::update_hook() = nullptr;
  }
  AllRoundTrips(const AllRoundTrips&) = delete;
  AllRoundTrips& operator=(const AllRoundTrips&) = delete;
};

// The serving replay of the simulator's reclaim tests (chat: a burst, half an hour of nothing, a
// burst; rare: a request every ten minutes; busy: one every 5 s), with a pool that can grow and a
// batch job that needs a second node.
sim::Scenario serving_and_batch() {
  auto parsed = sim::parse_scenario(R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
spec:
  duration: 2h
  nodePools:
    - {name: gpu, flavor: gpu, gpusPerNode: 4, nodes: 1, minNodes: 1, maxNodes: 3,
       provisioningTime: 5m, pricePerNodeHour: 8}
  workloads:
    - {name: chat, namespace: llm, queue: serving, kind: InferenceService, duration: 2h}
    - {name: rare, namespace: llm, queue: serving, kind: InferenceService, duration: 2h}
    - {name: busy, namespace: llm, queue: serving, kind: InferenceService, duration: 2h}
    - {name: train, namespace: research, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 4,
       submitAt: 20m, duration: 30m}
)",
                                    "serving.yaml", "");
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  if (!parsed.is_ok()) return {};
  sim::Scenario s = std::move(parsed).value();
  s.gpuaas_scale_to_zero = true;
  auto chat = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 5'000; t < 65'000; t += 1000) chat->push_back(t);
  for (int64_t t = 1'800'000; t < 1'860'000; t += 1000) chat->push_back(t);
  for (int64_t t = 4'000'000; t < 4'030'000; t += 3000) chat->push_back(t);
  auto rare = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 300'000; t < 7'200'000; t += 600'000) rare->push_back(t);
  auto busy = std::make_shared<std::vector<int64_t>>();
  for (int64_t t = 1'000; t < 7'200'000; t += 5'000) busy->push_back(t);
  s.workloads[0].arrivals_ms = chat;
  s.workloads[1].arrivals_ms = rare;
  s.workloads[2].arrivals_ms = busy;
  return s;
}

std::string report_of(const sim::RunResult& r) {
  json j = json::parse(sim::report_json(r));
  j.erase("wall_seconds");
  return j.dump();
}

TEST(SnapshotSimTest, ReclaimScaleOutAndAccountingTogetherAfterEveryRestore) {
  const sim::Scenario s = serving_and_batch();
  sim::SimOptions o;
  o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
  o.policy = sim::Baseline::kGpuaas;
  auto plain = sim::run_simulation(s, o);
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  Counts c;
  std::string again;
  {
    AllRoundTrips hooks(c);
    auto r = sim::run_simulation(s, o);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    again = report_of(*r);
  }
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.copies_differ, 0);
  EXPECT_GT(c.restored, 1000);
  EXPECT_EQ(report_of(*plain), again);
  // What the run covered: services to zero and back, a node bought, a daemon cost report.
  EXPECT_GT(plain->actions_by_rule["reclaim/idle"], 0);
  EXPECT_GT(plain->wakes, 0);
  EXPECT_GT(plain->pools["gpu"].nodes_launched, 0) << report_of(*plain);
  EXPECT_NE(plain->daemon_report.find("\"tenants\""), std::string::npos);
}

}  // namespace
}  // namespace gpuaas::core
