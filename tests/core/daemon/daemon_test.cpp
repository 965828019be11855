// The event loop over the in-process bus: intake, dead letters, recovery after a restart.
#include "gpuaas/core/daemon.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

DaemonConfig test_config() {
  DaemonConfig cfg = default_config("gpuaas");
  cfg.tick_interval = std::chrono::milliseconds(0);
  cfg.intake.fetch_batch = 7;  // small batches, so restarts fall inside the stream
  return cfg;
}

std::string node_json(const std::string& name, int rv) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","uid":"u-)" +
         name + R"(","resourceVersion":")" + std::to_string(rv) +
         R"(","labels":{"nvidia.com/gpu.product":"H100"}},"status":{"capacity":
         {"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"},
         "conditions":[{"type":"Ready","status":"True"}]}})";
}

void publish_node(bus::Bus& b, const std::string& name, int rv, int64_t second) {
  bus::Subjects s;
  auto ev = wire::make_object_event(wire::ChangeType::kModified, node_json(name, rv),
                                    "ev-" + name + "-" + std::to_string(rv), "test",
                                    wire::EventTime(std::chrono::seconds(second)));
  ASSERT_TRUE(b.publish_stored(wire::encode_event(ev, s.events("", "Node")), ev.id()).is_ok());
}

void drain(Daemon& d) {
  for (int i = 0; i < 1000; ++i) {
    auto n = d.step(std::chrono::milliseconds(0));
    ASSERT_TRUE(n.is_ok());
    if (*n == 0) return;
  }
}

TEST(Daemon, AppliesEventsAndAnswersState) {
  auto b = bus::make_memory_bus();
  auto registry = std::make_shared<telemetry::Registry>();
  Daemon d(test_config(), *b, registry);
  ASSERT_TRUE(d.start().is_ok());
  publish_node(*b, "n1", 1, 100);
  publish_node(*b, "n2", 1, 101);
  drain(d);
  EXPECT_EQ(d.stats().events_applied, 2u);
  EXPECT_EQ(d.stats().last_applied_sequence, 2u);
  // The API answers over the bus, as gpuaasctl asks.
  bus::Subjects s;
  auto reply = b->request({s.api("state"), {}, "{}"}, std::chrono::seconds(1));
  ASSERT_TRUE(reply.is_ok());
  json state = json::parse(reply->data);
  EXPECT_EQ(state["nodes"].size(), 2u);
  EXPECT_EQ(state["gpus_by_flavor"]["H100"]["capacity"], 16);
  EXPECT_EQ(state["clock"], "1970-01-01T00:01:41.000Z");  // event time, not the wall clock
  auto text = telemetry::TextSerializer().Serialize(registry->Collect());
  EXPECT_NE(text.find("gpuaas_events_processed_total{type=\"object\"} 2"), std::string::npos);
}

// An answer above the server's max_payload could not be sent: the asker gets an error that says
// so instead of a timeout.
TEST(Daemon, AnAnswerTooLargeToSendBecomesAnError) {
  auto b = bus::make_memory_bus();
  Daemon d(test_config(), *b, nullptr);
  ASSERT_TRUE(d.start().is_ok());
  bus::Subjects s;
  const std::string big(3000, 'x');
  for (int i = 0; i < 400; ++i) {
    std::string name = "node-" + std::to_string(i);
    auto ev = wire::make_object_event(wire::ChangeType::kAdded,
                                      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" +
                                          name + R"(","labels":{"note":")" + big + R"("}}})",
                                      "ev-" + name, "test",
                                      wire::EventTime(std::chrono::seconds(100 + i)));
    ASSERT_TRUE(b->publish_stored(wire::encode_event(ev, s.events("", "Node")), ev.id()).is_ok());
  }
  drain(d);
  ASSERT_GT(d.state_json().size(), 1024u * 1024u);
  auto reply = b->request({s.api("state"), {}, "{}"}, std::chrono::seconds(1));
  ASSERT_TRUE(reply.is_ok()) << reply.status().message();
  json answer = json::parse(reply->data);
  EXPECT_NE(answer.value("error", "").find("more than the NATS server's max_payload"),
            std::string::npos)
      << reply->data.substr(0, 200);
}

// Thousands of ClusterQueues: valid, but their PolicySet event is over the server's max_payload.
// The daemon says which files and what limit instead of the server's bare refusal.
TEST(Daemon, PolicyFilesTooLargeForOneEventAreRefusedNamingTheLimit) {
  const std::string path = ::testing::TempDir() + "/many-queues.yaml";
  {
    std::ofstream out(path);
    out << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n";
    for (int i = 0; i < 5000; ++i) {
      out << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq-"
          << i
          << "}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: "
             "[nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: "
             "nvidia.com/gpu, nominalQuota: 8}\n";
    }
  }
  auto b = bus::make_memory_bus();
  DaemonConfig cfg = test_config();
  cfg.policy_files = {path};
  Daemon d(cfg, *b, nullptr);
  const Status s = d.start();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find(path + ": the policy files make a PolicySet event of"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("max_payload (" + std::to_string(b->max_payload()) + " bytes"),
            std::string::npos)
      << s.message();
}

TEST(Daemon, BadInputIsDeadLetteredAndTheRestApplied) {
  auto b = bus::make_memory_bus();
  Daemon d(test_config(), *b, nullptr);
  ASSERT_TRUE(d.start().is_ok());
  bus::Subjects s;
  std::vector<bus::Message> dead;
  auto sub = b->subscribe(s.all(bus::SubjectCategory::kDeadletter),
                          [&](const bus::Message& m) { dead.push_back(m); });
  ASSERT_TRUE(sub.is_ok());
  publish_node(*b, "n1", 1, 100);
  ASSERT_TRUE(b->publish_stored({s.events("team-a", "Pod"), {}, "garbage"}, "").is_ok());
  publish_node(*b, "n2", 1, 101);
  drain(d);
  EXPECT_EQ(d.stats().events_applied, 3u);
  EXPECT_EQ(d.stats().deadlettered, 1u);
  EXPECT_EQ(d.read([](const ClusterModel& m) { return m.nodes().size(); }), 2u);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].subject, s.deadletter("team-a"));
  v1::DeadLetter dl;
  ASSERT_TRUE(dl.ParseFromString(dead[0].data));
  EXPECT_EQ(dl.payload(), "garbage");
  EXPECT_EQ(dl.stream_sequence(), 2u);
  EXPECT_FALSE(dl.reason().empty());
}

// A second daemon on the same streams rebuilds the model from the stream up to where the first
// stopped, applies the rest live, applies nothing twice, and does not publish again the dead
// letters the first already published.
TEST(Daemon, RestartRebuildsTheModelAndAppliesEachEventOnce) {
  auto b = bus::make_memory_bus();
  bus::Subjects s;
  int dead = 0;
  auto sub =
      b->subscribe(s.all(bus::SubjectCategory::kDeadletter), [&](const bus::Message&) { ++dead; });
  ASSERT_TRUE(sub.is_ok());
  {
    Daemon first(test_config(), *b, nullptr);
    ASSERT_TRUE(first.start().is_ok());
    for (int i = 0; i < 10; ++i) publish_node(*b, "n" + std::to_string(i % 4), i + 1, 100 + i);
    ASSERT_TRUE(b->publish_stored({s.events("", "Node"), {}, "garbage"}, "").is_ok());
    drain(first);
    EXPECT_EQ(first.stats().last_applied_sequence, 11u);
  }
  EXPECT_EQ(dead, 1);
  for (int i = 10; i < 20; ++i) publish_node(*b, "n" + std::to_string(i % 4), i + 1, 100 + i);
  Daemon second(test_config(), *b, nullptr);
  ASSERT_TRUE(second.start().is_ok());
  EXPECT_EQ(second.stats().events_replayed, 11u);
  drain(second);
  auto st = second.stats();
  EXPECT_EQ(st.events_applied, 21u);
  EXPECT_EQ(st.last_applied_sequence, 21u);
  EXPECT_EQ(dead, 1);  // the replayed dead letter was not published again
  EXPECT_EQ(second.read([](const ClusterModel& m) { return m.nodes().size(); }), 4u);
  EXPECT_EQ(second.read([](const ClusterModel& m) { return m.stats().stale; }), 0u);
  // Every node holds its latest version.
  EXPECT_EQ(
      second.read([](const ClusterModel& m) { return m.nodes().at("n3").meta.resource_version; }),
      "20");
}

// The same events in the same order give the same model, however they were batched.
TEST(Daemon, BatchingDoesNotChangeTheModel) {
  std::vector<std::string> states;
  for (std::size_t batch : {1u, 3u, 512u}) {
    auto b = bus::make_memory_bus();
    auto cfg = test_config();
    cfg.intake.fetch_batch = batch;
    Daemon d(cfg, *b, nullptr);
    ASSERT_TRUE(d.start().is_ok());
    for (int i = 0; i < 30; ++i) publish_node(*b, "n" + std::to_string(i % 5), i + 1, 100 + i);
    drain(d);
    json j = json::parse(d.state_json());
    j.erase("intake");  // batch counts differ by design
    states.push_back(j.dump());
  }
  EXPECT_EQ(states[0], states[1]);
  EXPECT_EQ(states[0], states[2]);
}

}  // namespace
}  // namespace gpuaas::core
