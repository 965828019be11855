// Snapshots on a real nats-server: the state goes to the KV bucket every N events and on a clean
// stop; a restart loads it and replays only the events after it; a snapshot it cannot use is
// counted and ignored, and the stream is replayed from its start instead. Each test has its own
// subject root (streams and buckets).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

constexpr const char* kPolicy = R"({"apiVersion":"gpuaas.io/v1alpha1","kind":"PolicySet",
  "metadata":{"name":"active"},"spec":{"files":[{"name":"p.yaml","text":
  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: team-a}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 8}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: main, namespace: team-a}\nspec: {clusterQueue: team-a}\n"}]}})";

class DaemonSnapshot : public testing::NatsServerTest {
 protected:
  void SetUp() override {
    auto b = bus::connect_nats({.url = url()});
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    bus_ = std::move(b).value();
  }
  DaemonConfig config(const std::string& root) const {
    DaemonConfig cfg = default_config(root);
    cfg.tick_interval = std::chrono::milliseconds(0);
    cfg.policy_watch_interval = std::chrono::milliseconds(0);
    cfg.admission_from_stream = true;
    cfg.intake.fetch_batch = 5;
    cfg.intake.prefetch_batches = 0;
    cfg.snapshots.every_events = 10;
    return cfg;
  }
  // Event i of a history: the policy, then nodes and pods on them, updated again and again.
  void publish(const std::string& root, int from, int to) {
    bus::Subjects s(root);
    for (int i = from; i < to; ++i) {
      v1::Event ev;
      std::string subject;
      const wire::EventTime at(std::chrono::seconds(1000 + i));
      if (i == 0) {
        ev = wire::make_object_event(wire::ChangeType::kAdded, kPolicy, "ev-0", "test", at);
        subject = s.events("", kPolicySetKind);
      } else if (i % 3 == 1) {
        std::string name = "n" + std::to_string(i % 4);
        ev = wire::make_object_event(
            wire::ChangeType::kModified,
            R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
                R"(","resourceVersion":")" + std::to_string(i) +
                R"(","labels":{"nvidia.com/gpu.product":"H100"}},"status":{"capacity":)"
                R"({"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"},)"
                R"("conditions":[{"type":"Ready","status":"True"}]}})",
            "ev-" + std::to_string(i), "test", at);
        subject = s.events("", "Node");
      } else {
        std::string name = "p" + std::to_string(i % 7);
        ev = wire::make_object_event(
            i % 11 == 0 ? wire::ChangeType::kDeleted : wire::ChangeType::kModified,
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                R"(","namespace":"team-a","resourceVersion":")" + std::to_string(i) +
                R"("},"spec":{"nodeName":"n)" + std::to_string(i % 4) +
                R"(","containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},)"
                R"("status":{"phase":"Running"}})",
            "ev-" + std::to_string(i), "test", at);
        subject = s.events("team-a", "Pod");
      }
      ASSERT_TRUE(bus_->publish_stored(wire::encode_event(ev, subject), ev.id()).is_ok());
    }
  }
  static void step_to(Daemon& d, uint64_t seq) {
    for (int i = 0; i < 200 && d.stats().last_applied_sequence < seq; ++i)
      ASSERT_TRUE(d.step(std::chrono::milliseconds(500)).is_ok());
    ASSERT_EQ(d.stats().last_applied_sequence, seq);
  }
  // The state without one process's intake counters.
  static json state(const Daemon& d) {
    json j = json::parse(d.state_json());
    j.erase("intake");
    return j;
  }
  void restart_replays_only_after_the_snapshot(const std::string& root, bool fork);
  std::unique_ptr<bus::Bus> bus_;
};

// Either way of serializing (a forked child, or the intake thread) gives a snapshot the next
// process continues from.
void DaemonSnapshot::restart_replays_only_after_the_snapshot(const std::string& root, bool fork) {
  auto cfg = config(root);
  cfg.snapshots.fork = fork;
  json before;
  {
    Daemon first(cfg, *bus_, nullptr);
    ASSERT_TRUE(first.start().is_ok());
    publish(root, 0, 40);
    step_to(first, 40);
    EXPECT_GE(first.stats().snapshots_written, 3u);
    EXPECT_EQ(first.stats().snapshot_sequence, 40u);
    publish(root, 40, 47);  // after the last snapshot
    step_to(first, 47);
    EXPECT_EQ(first.stats().snapshot_sequence, 40u);
    before = state(first);
  }  // gone without a stop: like a crash
  Daemon second(cfg, *bus_, nullptr);
  ASSERT_TRUE(second.start().is_ok());
  EXPECT_EQ(second.stats().snapshot_sequence, 40u);
  EXPECT_EQ(second.stats().events_replayed, 7u);
  EXPECT_EQ(second.stats().last_applied_sequence, 47u);
  EXPECT_EQ(state(second), before);
  // And it goes on like the first would have.
  publish(root, 47, 60);
  step_to(second, 60);
  EXPECT_EQ(second.stats().snapshot_sequence, 52u);  // at the end of the batch 48-52
}

TEST_F(DaemonSnapshot, RestartLoadsTheSnapshotAndReplaysOnlyTheEventsAfterIt) {
  restart_replays_only_after_the_snapshot("snap1", true);
}

TEST_F(DaemonSnapshot, SerializedOnTheIntakeThreadWhenForkIsOff) {
  restart_replays_only_after_the_snapshot("snap1b", false);
}

TEST_F(DaemonSnapshot, ACleanStopWritesASnapshotSoTheNextStartReplaysNothing) {
  const auto cfg = config("snap2");
  json before;
  {
    Daemon first(cfg, *bus_, nullptr);
    ASSERT_TRUE(first.start().is_ok());
    publish("snap2", 0, 23);
    std::thread runner([&] { (void)first.run(); });
    for (int i = 0; i < 100 && first.stats().last_applied_sequence < 23; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    first.stop();
    runner.join();
    EXPECT_EQ(first.stats().snapshot_sequence, 23u);
    before = state(first);
  }
  Daemon second(cfg, *bus_, nullptr);
  ASSERT_TRUE(second.start().is_ok());
  EXPECT_EQ(second.stats().events_replayed, 0u);
  EXPECT_EQ(second.stats().last_applied_sequence, 23u);
  EXPECT_EQ(state(second), before);
}

TEST_F(DaemonSnapshot, ASnapshotItCannotUseIsCountedAndTheStreamReplayed) {
  const auto cfg = config("snap3");
  json before;
  {
    Daemon first(cfg, *bus_, nullptr);
    ASSERT_TRUE(first.start().is_ok());
    publish("snap3", 0, 25);
    step_to(first, 25);
    before = state(first);
  }
  bus::KvSettings kv;
  kv.bucket = "SNAP3_SNAPSHOT";
  auto bucket = bus_->open_kv(kv);
  ASSERT_TRUE(bucket.is_ok()) << bucket.status().message();
  auto got = bus::get_chunked(**bucket, "state.gpuaasd");
  ASSERT_TRUE(got.is_ok() && got->has_value());
  for (std::string damaged :
       {std::string("garbage"), (*got)->value.substr(0, 200), (*got)->value + "x"}) {
    ASSERT_TRUE(bus::put_chunked(**bucket, "state.gpuaasd", damaged).is_ok());
    auto registry = std::make_shared<telemetry::Registry>();
    Daemon second(cfg, *bus_, registry);
    ASSERT_TRUE(second.start().is_ok());
    EXPECT_EQ(second.stats().snapshots_refused, 1u);
    EXPECT_EQ(second.stats().events_replayed, 25u);
    EXPECT_EQ(state(second), before);
    auto text = telemetry::TextSerializer().Serialize(registry->Collect());
    EXPECT_NE(text.find("gpuaas_snapshots_refused_total 1"), std::string::npos);
  }
}

TEST_F(DaemonSnapshot, ASnapshotOfAStreamCreatedAgainIsNotUsed) {
  const auto cfg = config("snap4");
  {
    Daemon first(cfg, *bus_, nullptr);
    ASSERT_TRUE(first.start().is_ok());
    publish("snap4", 0, 25);
    step_to(first, 25);
    EXPECT_EQ(first.stats().snapshot_sequence, 20u);
  }
  // The stream (and with it the work consumer) deleted and filled again with other events.
  ASSERT_TRUE(bus_->delete_stream(cfg.events_stream.name).is_ok());
  ASSERT_TRUE(bus_->ensure_stream(cfg.events_stream).is_ok());
  publish("snap4", 100, 130);
  Daemon second(cfg, *bus_, nullptr);
  ASSERT_TRUE(second.start().is_ok());
  EXPECT_EQ(second.stats().snapshots_refused, 1u);
  EXPECT_EQ(second.stats().last_applied_sequence, 0u);
  EXPECT_EQ(second.read([](const ClusterModel& m) { return m.nodes().size(); }), 0u);
  step_to(second, 30);
  EXPECT_EQ(second.read([](const ClusterModel& m) { return m.nodes().size(); }), 4u);
}

}  // namespace
}  // namespace gpuaas::core
