// Tenant isolation inside the daemon (docs/security.md): samples on a namespace's metrics subject
// may speak only for that namespace, a namespace's state shows nothing of another, and the
// connection settings of the nats: section.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/event_applier.hpp"
#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/core/state_view.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

const wire::EventTime kT0 = wire::from_unix_ms(1'795'968'203'000);

bus::Message samples_on(const std::string& subject, const std::vector<Labels>& labels) {
  auto ev = wire::make_event("m-" + subject, "bridge", kT0);
  for (const auto& ls : labels) {
    auto* s = ev.mutable_metrics()->add_samples();
    s->set_name("DCGM_FI_DEV_GPU_UTIL");
    s->set_value(0);
    for (const auto& [n, v] : ls) {
      auto* l = s->add_labels();
      l->set_name(n);
      l->set_value(v);
    }
  }
  return wire::encode_event(ev, subject);
}

class NamespacedSamplesTest : public ::testing::Test {
 protected:
  void SetUp() override { spdlog::set_level(spdlog::level::off); }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
  bool deliver(const bus::Message& m) {
    Delivery d{m.subject, m.data, m.header("content-type"), ++seq_};
    return applier_.apply(d, model_);
  }
  std::string only_reason() {
    auto dls = applier_.take_deadletters();
    EXPECT_EQ(dls.size(), 1u);
    v1::DeadLetter dl;
    if (!dls.empty()) {
      EXPECT_TRUE(dl.ParseFromString(dls[0].first.data));
    }
    return dl.reason();
  }
  EventApplier applier_{bus::Subjects("gpuaas"), "gpuaasd", nullptr};
  ClusterModel model_;
  uint64_t seq_ = 0;
};

TEST_F(NamespacedSamplesTest, SamplesOfTheSubjectsNamespaceApply) {
  EXPECT_TRUE(deliver(samples_on("gpuaas.v1.metrics.team-a",
                                 {{{"namespace", "team-a"}, {"pod", "p"}},
                                  {{"exported_namespace", "team-a"}, {"namespace", "monitoring"}},
                                  {{"gpu", "0"}}})));  // naming no namespace: matches no pod
  EXPECT_EQ(model_.metrics().for_pod("team-a", "p").size(), 1u);
  // The cluster scope (a dcgm-exporter scrape through the bridge) names any namespace.
  EXPECT_TRUE(
      deliver(samples_on("gpuaas.v1.metrics._cluster", {{{"namespace", "team-a"}, {"pod", "q"}},
                                                        {{"namespace", "team-b"}, {"pod", "r"}}})));
  EXPECT_EQ(model_.metrics().for_pod("team-b", "r").size(), 1u);
}

TEST_F(NamespacedSamplesTest, SamplesNamingAnotherNamespaceAreRejectedWhole) {
  // Zero utilisation for team-b's pod, sent on team-a's subject: it would make it look idle.
  EXPECT_FALSE(deliver(samples_on(
      "gpuaas.v1.metrics.team-a",
      {{{"namespace", "team-a"}, {"pod", "p"}}, {{"namespace", "team-b"}, {"pod", "victim"}}})));
  EXPECT_EQ(only_reason(),
            "sample 1 (DCGM_FI_DEV_GPU_UTIL): namespace \"team-b\" does not belong on this subject "
            "(namespace \"team-a\")");
  // exported_namespace is what the store matches by, whatever namespace says.
  EXPECT_FALSE(deliver(
      samples_on("gpuaas.v1.metrics.team-a",
                 {{{"exported_namespace", "team-b"}, {"namespace", "team-a"}, {"pod", "v"}}})));
  EXPECT_NE(only_reason().find("namespace \"team-b\""), std::string::npos);
  // A label twice: the store would pick one of them.
  EXPECT_FALSE(
      deliver(samples_on("gpuaas.v1.metrics.team-a",
                         {{{"namespace", "team-a"}, {"namespace", "team-b"}, {"pod", "victim"}}})));
  EXPECT_NE(only_reason().find("two different namespace labels"), std::string::npos);
  EXPECT_EQ(model_.metrics().series_count(), 0u);
  EXPECT_TRUE(model_.metrics().for_pod("team-b", "victim").empty());
}

void apply_json(ClusterModel& model, const std::string& text) {
  ObjectDecoder d;
  auto obj = d.decode(text);
  ASSERT_TRUE(obj.is_ok()) << obj.status().message();
  model.apply(wire::ChangeType::kAdded, std::move(obj.value()), kT0);
}

TEST(NamespaceState, ShowsOnlyTheNamespace) {
  ClusterModel model;
  apply_json(model, R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-1",
      "labels":{"nvidia.com/gpu.product":"H100"}},"status":{"capacity":{"nvidia.com/gpu":"8"},
      "allocatable":{"nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}})");
  for (const std::string ns : {"team-a", "team-b"}) {
    apply_json(model, R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"job-)" + ns +
                          R"(","namespace":")" + ns + R"("}})");
    apply_json(model, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-)" + ns +
                          R"(","namespace":")" + ns +
                          R"("},"spec":{"nodeName":"gpu-node-1"},"status":{"phase":"Running"}})");
  }
  auto s =
      nlohmann::json::parse(render_namespace_state_json(model, "team-a", R"([{"name":"cq-a"}])"));
  EXPECT_EQ(s["namespace"], "team-a");
  ASSERT_EQ(s["workloads"].size(), 1u);
  EXPECT_EQ(s["workloads"][0]["name"], "job-team-a");
  EXPECT_EQ(s["pods"]["total"], 1);
  EXPECT_EQ(s["pods"]["running"], 1);
  EXPECT_EQ(s["gpus_by_flavor"]["H100"]["capacity"], 8);
  EXPECT_EQ(s["cluster_queues"][0]["name"], "cq-a");
  // Nothing of the other namespace, nor of the nodes, anywhere in the answer.
  const std::string text = s.dump();
  EXPECT_EQ(text.find("team-b"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpu-node-1"), std::string::npos) << text;
  EXPECT_FALSE(s.contains("nodes"));
  EXPECT_FALSE(s.contains("intake"));
  EXPECT_FALSE(s.contains("policies"));
}

TEST(ScopedApiSubjects, CarryTheNamespace) {
  bus::Subjects s("gpuaas");
  EXPECT_EQ(s.api("state", "team-a"), "gpuaas.v1.api.state.team-a");
  auto scoped = s.parse(s.api("explain", "team-a"));
  ASSERT_TRUE(scoped.has_value());
  EXPECT_EQ(scoped->category, bus::SubjectCategory::kApi);
  EXPECT_EQ(scoped->namespace_token, "team-a");
  auto all = s.parse(s.api("state"));
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->namespace_token, "");
}

class NatsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("gpuaas-nats-config-" + std::to_string(::getpid()) + ".yaml");
  }
  void TearDown() override { std::filesystem::remove(path_); }
  Status load(const std::string& text, DaemonConfig& cfg) {
    std::ofstream(path_, std::ios::trunc) << text;
    return load_config_file(path_.string(), cfg);
  }
  std::filesystem::path path_;
};

TEST_F(NatsConfigTest, ReadsCredentialsTlsAndInboxPrefix) {
  DaemonConfig cfg = default_config();
  ASSERT_TRUE(load(R"(nats:
  user: gpuaasd
  passwordFile: /run/secrets/nats-password
  inboxPrefix: _INBOX_gpuaasd
  tls:
    ca: /etc/nats/ca.pem
    cert: /etc/nats/client.pem
    key: /etc/nats/client-key.pem
    serverName: nats.example.com
)",
                   cfg)
                  .is_ok());
  EXPECT_EQ(cfg.nats.user, "gpuaasd");
  EXPECT_EQ(cfg.nats.password_file, "/run/secrets/nats-password");
  EXPECT_EQ(cfg.nats.inbox_prefix, "_INBOX_gpuaasd");
  EXPECT_EQ(cfg.nats.tls_ca, "/etc/nats/ca.pem");
  EXPECT_EQ(cfg.nats.tls_cert, "/etc/nats/client.pem");
  EXPECT_EQ(cfg.nats.tls_key, "/etc/nats/client-key.pem");
  EXPECT_EQ(cfg.nats.tls_server_name, "nats.example.com");
  EXPECT_EQ(cfg.nats.name, "gpuaasd");  // the rest of the connection's settings stay
}

TEST_F(NatsConfigTest, MistakesNameTheSettingAndItsPlace) {
  DaemonConfig cfg = default_config();
  Status s = load("nats:\n  usr: x\n", cfg);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find(path_.string() + ":2:3: unknown setting \"usr\" in nats"),
            std::string::npos)
      << s.message();
  s = load("nats:\n  tls:\n    certificate: x\n", cfg);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("unknown setting \"certificate\" in nats.tls"), std::string::npos);
  s = load("nats:\n  inboxPrefix: _INBOX.>\n", cfg);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find(":2:16: nats.inboxPrefix"), std::string::npos) << s.message();
}

TEST_F(NatsConfigTest, AnInlinePasswordStaysOutOfErrors) {
  DaemonConfig cfg = default_config();
  Status s = load("nats:\n  password: hunter2-secret\n  bogus: 1\n", cfg);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message().find("hunter2-secret"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace gpuaas::core
