// A snapshot reads back to the state it was written from, whatever the model holds: here a model
// that never deleted anything (the demo cluster: nodes, a notebook, a Ray cluster, a PyTorchJob,
// an inference service, their pods), with no policy and with each example policy, through the
// real plugins. A daemon applies the cluster on the in-process bus and snapshots; a second one
// starts on the same bus and must load that snapshot (not replay the stream) and show the same
// state. Loading saves the state again and compares the bytes, so any field that does not read
// back the same shows up as a refused snapshot.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "gpuaas/base/archive.hpp"
#include "gpuaas/base/kube_scope.hpp"
#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kSource = GPUAAS_SOURCE_DIR;

// Every example policy, and none.
std::vector<std::string> policies() {
  std::vector<std::string> out = {""};
  for (const auto& e : fs::directory_iterator(kSource / "policies/examples"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class SnapshotRoundTrip : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    host_ = std::make_unique<host::PluginHost>(nullptr);
    host_->load_directory(GPUAAS_BIN_DIR "/../plugins");
    ASSERT_FALSE(host_->plugins().empty()) << "the plugins are not built";
    interpreter_ = std::make_unique<PluginInterpreter>(*host_);
    bus_ = bus::make_memory_bus();
  }
  DaemonConfig config() const {
    DaemonConfig cfg = default_config("roundtrip");
    cfg.server = kEmbeddedServer;
    cfg.tick_interval = std::chrono::milliseconds(0);
    cfg.policy_watch_interval = std::chrono::milliseconds(0);
    cfg.admin_listen.clear();
    cfg.snapshots.every_events = 1;
    if (!GetParam().empty()) cfg.policy_files = {GetParam()};
    return cfg;
  }
  // The demo cluster as the bridge would report it, one event a second, then an hour of ticks.
  void publish_cluster() {
    auto manifests = kube::read_manifests((kSource / "deploy/demo/cluster.yaml").string());
    ASSERT_TRUE(manifests.is_ok()) << manifests.status().message();
    bus::Subjects s("roundtrip");
    wire::EventTime t(std::chrono::seconds(1'800'000'000));
    int n = 0;
    for (const auto& m : *manifests) {
      json obj = json::parse(m.json);
      const std::string kind = obj["kind"];
      std::string ns = obj["metadata"].value("namespace", "");
      if (ns.empty() && !cluster_scoped_kind(kind)) obj["metadata"]["namespace"] = ns = "default";
      t += std::chrono::seconds(1);
      auto ev = wire::make_object_event(wire::ChangeType::kAdded, obj.dump(),
                                        "ev-" + std::to_string(++n), "test", t);
      ASSERT_TRUE(
          bus_->publish_stored(wire::encode_event(ev, s.events(ns, kind)), ev.id()).is_ok());
    }
    for (int i = 1; i <= 60; ++i) {
      auto tick =
          wire::make_event("tick-" + std::to_string(i), "test", t + std::chrono::minutes(i));
      tick.mutable_queue()->mutable_tick()->set_sequence(static_cast<uint64_t>(i));
      tick.set_type(std::string(wire::kTypeTick));
      ASSERT_TRUE(bus_->publish_stored(wire::encode_event(tick, s.ticks()), tick.id()).is_ok());
    }
  }
  static void drain(Daemon& d) {
    for (int i = 0; i < 1000; ++i) {
      auto n = d.step(std::chrono::milliseconds(1));
      ASSERT_TRUE(n.is_ok()) << n.status().message();
      if (*n == 0) return;
    }
  }
  static json state(const Daemon& d) {
    json j = json::parse(d.state_json());
    j.erase("intake");
    return j;
  }

  std::unique_ptr<host::PluginHost> host_;
  std::unique_ptr<PluginInterpreter> interpreter_;
  std::unique_ptr<bus::Bus> bus_;
};

TEST_P(SnapshotRoundTrip, ARestartLoadsTheSnapshotOfAModelThatNeverDeleted) {
  const DaemonConfig cfg = config();
  json before, report_before;
  uint64_t last = 0;
  {
    auto registry = std::make_shared<telemetry::Registry>();
    Daemon first(cfg, *bus_, registry, interpreter_.get());
    ASSERT_TRUE(first.start().is_ok());
    publish_cluster();
    drain(first);
    last = first.stats().last_applied_sequence;
    ASSERT_GT(last, 60u);
    ASSERT_EQ(first.stats().snapshot_sequence, last);
    before = state(first);
    report_before = json::parse(first.report_json(""));
    ASSERT_FALSE(before["workloads"].empty()) << before.dump();
  }
  auto registry = std::make_shared<telemetry::Registry>();
  Daemon second(cfg, *bus_, registry, interpreter_.get());
  ASSERT_TRUE(second.start().is_ok());
  EXPECT_EQ(second.stats().snapshots_refused, 0u);
  EXPECT_EQ(second.stats().snapshot_sequence, last);
  EXPECT_EQ(second.stats().events_replayed, 0u);
  EXPECT_EQ(state(second), before);
  EXPECT_EQ(json::parse(second.report_json("")), report_before);
}

// The snapshot layout written before the decisions became stages (schema 2: admission, reclaim
// and gating fields in one list) still reads back: a pipeline loaded from it writes the same
// bytes, in either layout, as the pipeline it was written from, and explains the same.
TEST_P(SnapshotRoundTrip, ThePipelineReadsTheOlderSnapshotLayout) {
  if (GetParam().empty()) GTEST_SKIP() << "without a policy the pipeline holds nothing";
  auto policy = policy_set_object({GetParam()});
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  auto manifests = kube::read_manifests((kSource / "deploy/demo/cluster.yaml").string());
  ASSERT_TRUE(manifests.is_ok()) << manifests.status().message();
  ClusterModel model;
  model.set_interpreter(interpreter_.get());
  model.record_changes(true);
  DecisionPipeline written(bus::Subjects("roundtrip"), "test", nullptr, interpreter_.get());
  ObjectDecoder decoder;
  wire::EventTime t(std::chrono::seconds(1'800'000'000));
  std::vector<std::string> objects = {*policy};
  std::vector<std::string> names;
  for (const auto& m : *manifests) {
    json obj = json::parse(m.json);
    const std::string kind = obj["kind"];
    if (obj["metadata"].value("namespace", "").empty() && !cluster_scoped_kind(kind))
      obj["metadata"]["namespace"] = "default";
    names.push_back(obj["metadata"].value("namespace", "") + "/" +
                    obj["metadata"].value("name", ""));
    objects.push_back(obj.dump());
  }
  int n = 0;
  for (auto& text : objects) {
    auto obj = decoder.decode(text);
    ASSERT_TRUE(obj.is_ok()) << obj.status().message();
    t += std::chrono::seconds(30);
    model.advance(t);
    model.apply(wire::ChangeType::kAdded, std::move(obj).value(), t);
    written.after_event(model, "ev-" + std::to_string(++n));
  }
  ASSERT_TRUE(written.active());
  auto save = [](const DecisionPipeline& p, uint32_t schema) {
    base::ArchiveWriter w;
    p.save_state(w, schema);
    return w.take();
  };
  const std::string old_layout = save(written, 2);
  DecisionPipeline loaded(bus::Subjects("roundtrip"), "test", nullptr, interpreter_.get());
  base::ArchiveReader r(old_layout);
  loaded.load_state(r, 2);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r.done());
  EXPECT_EQ(save(loaded, 2), old_layout);
  // Schema 3, the stages' layout: what schema 2 holds, in its newer order. Later schemas add
  // state an older snapshot does not have (schema 4: the serving capacity stage and the cost of
  // each service), which starts empty after an upgrade.
  EXPECT_EQ(save(loaded, 3), save(written, 3));
  EXPECT_EQ(loaded.queues_json(model), written.queues_json(model));
  for (const auto& name : names)
    EXPECT_EQ(loaded.explain_json(name, model), written.explain_json(name, model));
}

INSTANTIATE_TEST_SUITE_P(EachExamplePolicy, SnapshotRoundTrip, ::testing::ValuesIn(policies()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param.empty() ? std::string("no_policy")
                                                           : fs::path(p.param).stem().string();
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace gpuaas::core
