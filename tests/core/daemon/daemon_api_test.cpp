// The daemon's API guard (core/src/daemon/api.cpp): whatever a request carries, Daemon::answer()
// answers one JSON object or, for a reply subject gpuaasd must not write to, nothing; each refusal
// is counted by reason. On the in-process bus, with a policy, so that every endpoint has an answer.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

constexpr const char* kPolicy = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
)";

class DaemonApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(spdlog::level::off);
    policy_ = std::filesystem::temp_directory_path() /
              ("gpuaas-api-test-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(policy_) << kPolicy;
    DaemonConfig cfg = default_config();
    cfg.server = kEmbeddedServer;
    cfg.tick_interval = std::chrono::milliseconds(0);
    cfg.policy_watch_interval = std::chrono::milliseconds(0);
    cfg.admin_listen.clear();
    cfg.snapshots.every_events = 0;
    cfg.api_fork_above = fork_above_;
    cfg.policy_files = {policy_.string()};
    daemon_ = std::make_unique<Daemon>(cfg, *bus_, registry_);
    ASSERT_TRUE(daemon_->start().is_ok());
    ASSERT_TRUE(daemon_->step(std::chrono::milliseconds(1)).is_ok());
  }
  void TearDown() override {
    daemon_.reset();
    std::filesystem::remove(policy_);
    spdlog::set_level(spdlog::level::info);
  }
  std::optional<std::string> ask(const std::string& subject, const std::string& body,
                                 const std::string& reply = "_INBOX.test.1") {
    bus::Message m;
    m.subject = subject;
    m.data = body;
    m.reply = reply;
    return daemon_->answer(m);
  }
  std::string error_of(const std::optional<std::string>& answer) {
    EXPECT_TRUE(answer.has_value());
    if (!answer) return "";
    json j = json::parse(*answer);
    return j.value("error", "");
  }
  double refused(const std::string& reason) {
    auto text = telemetry::TextSerializer().Serialize(registry_->Collect());
    const std::string key = "gpuaas_api_requests_refused_total{reason=\"" + reason + "\"} ";
    auto at = text.find(key);
    return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
  }

  int64_t fork_above_ = -1;  // answers in place unless a test asks for forked ones
  std::unique_ptr<bus::Bus> bus_ = bus::make_memory_bus();
  std::shared_ptr<telemetry::Registry> registry_ = std::make_shared<telemetry::Registry>();
  std::filesystem::path policy_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(DaemonApiTest, EveryEndpointAnswersJsonScopedOrNot) {
  for (const char* endpoint : {"state", "plugins", "explain", "report"}) {
    for (const std::string& subject : {"gpuaas.v1.api." + std::string(endpoint),
                                       "gpuaas.v1.api." + std::string(endpoint) + ".team-a"}) {
      auto a = ask(subject, "");
      ASSERT_TRUE(a) << subject;
      EXPECT_TRUE(json::parse(*a).is_object()) << subject << ": " << *a;
    }
  }
  EXPECT_EQ(json::parse(*ask("gpuaas.v1.api.state.team-a", ""))["namespace"], "team-a");
  EXPECT_EQ(daemon_->api_refusals(), 0u);
}

// Page requests (state, explain, report) with a field the endpoint does not take, or of the wrong
// type: an error naming the field, counted; the next good request is answered.
// Every answer rendered by a forked child from its frozen copy (api.forkAbove: 0): the same bytes
// as in place, and a refusal made in the child is counted in the daemon.
class DaemonApiForkedTest : public DaemonApiTest {
 protected:
  void SetUp() override {
    fork_above_ = 0;
    DaemonApiTest::SetUp();
  }
};

TEST_F(DaemonApiForkedTest, AnswersFromTheForkedCopyAreTheInPlaceOnes) {
  EXPECT_EQ(*ask("gpuaas.v1.api.state", ""), daemon_->state_json());
  EXPECT_EQ(*ask("gpuaas.v1.api.report", ""), daemon_->report_json(""));
  EXPECT_EQ(*ask("gpuaas.v1.api.explain", "team-a/none"), daemon_->explain_json("team-a/none"));
  EXPECT_EQ(json::parse(*ask("gpuaas.v1.api.state.team-a", ""))["namespace"], "team-a");
  EXPECT_EQ(daemon_->api_refusals(), 0u);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.report", R"({"since":"1h"})")).find("since"),
            std::string::npos);
  EXPECT_EQ(refused("bad_request"), 1);
  EXPECT_EQ(daemon_->api_refusals(), 1u);
}

// /metrics from a forked child: the gauges the child refreshed in its copy are in the text it
// sends, the same text as a refresh in place; the parent's registry is left as it was.
TEST_F(DaemonApiForkedTest, MetricsFromTheForkedCopyAreTheInPlaceOnes) {
  const std::string before = telemetry::TextSerializer().Serialize(registry_->Collect());
  const std::string forked = daemon_->metrics_text();
  EXPECT_NE(forked.find("gpuaas_cluster_queue_nominal_quota{"), std::string::npos) << forked;
  EXPECT_EQ(telemetry::TextSerializer().Serialize(registry_->Collect()), before);
  EXPECT_EQ(daemon_->metrics_text(), forked);  // again: nothing counted twice
  daemon_->refresh_metrics();
  EXPECT_EQ(telemetry::TextSerializer().Serialize(registry_->Collect()), forked);
}

TEST_F(DaemonApiTest, BadPageRequestsGetAnErrorNamingTheField) {
  EXPECT_NE(
      error_of(ask("gpuaas.v1.api.state", R"({"view":"page","section":"pods"})")).find("section"),
      std::string::npos);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.state", R"({"view":"page","limit":0,"section":"nodes"})"))
                .find("limit"),
            std::string::npos);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.explain", R"({"flavor":"x"})")).find("\"flavor\""),
            std::string::npos);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.report", R"({"since":"1h"})")).find("since"),
            std::string::npos);
  EXPECT_EQ(refused("bad_request"), 4);
  auto page = json::parse(*ask("gpuaas.v1.api.state", R"({"view":"page","section":"nodes"})"));
  EXPECT_TRUE(page["items"].is_array()) << page.dump();
}

TEST_F(DaemonApiTest, RepliesItMustNotWriteToAreNotAnswered) {
  for (const char* reply : {"$JS.API.STREAM.PURGE.GPUAAS_EVENTS", "$KV.GPUAAS_SNAPSHOT.x",
                            "gpuaas.v1.actions.team-b.Job", "_INBOX.>", "", "a..b"})
    EXPECT_FALSE(ask("gpuaas.v1.api.plugins.team-a", "", reply)) << reply;
  EXPECT_EQ(refused("reply_subject"), 6);
  EXPECT_EQ(daemon_->api_refusals(), 6u);
}

TEST_F(DaemonApiTest, BodiesThatAreNotUtf8AndUnknownEndpointsGetAnError) {
  EXPECT_EQ(error_of(ask("gpuaas.v1.api.explain.team-a", "team-a/\xff")),
            "the request is not valid UTF-8 (byte 7)");
  EXPECT_NE(error_of(ask("gpuaas.v1.api.explain", "team-b/caf\xe9")).find("UTF-8"),
            std::string::npos);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.report", "\xc0\xaf")).find("UTF-8"), std::string::npos);
  EXPECT_EQ(refused("invalid_utf8"), 3);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.delete", "")).find("no API endpoint"), std::string::npos);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.state.team-a.more", "")).find("no API endpoint"),
            std::string::npos);
  EXPECT_EQ(refused("unknown_endpoint"), 2);
  // A scope that is not a namespace, and a report window that is not a number: the handlers'
  // own errors, answered.
  EXPECT_NE(error_of(ask("gpuaas.v1.api.state._cluster", "")).find("scope"), std::string::npos);
  EXPECT_NE(error_of(ask("gpuaas.v1.api.report", "-5")).find("whole number"), std::string::npos);
  // A window longer than event time is all of it (it overflowed the clock, found by fuzz_api).
  auto all = ask("gpuaas.v1.api.report", "22222222600");
  ASSERT_TRUE(all);
  EXPECT_EQ(json::parse(*all), json::parse(*ask("gpuaas.v1.api.report", "")));
  // And it goes on answering.
  EXPECT_TRUE(json::parse(*ask("gpuaas.v1.api.state", "")).contains("clock"));
}

}  // namespace
}  // namespace gpuaas::core
