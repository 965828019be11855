// Tenant isolation with the shipped server configuration (deploy/nats/nats-server.conf): a real
// nats-server started with that file, a real core::Daemon connected as its own user, tenants
// team-a and team-b with theirs. Permission violations are read from the server's own answer
// (-ERR before the PONG of a flush), and the stream and the model are read to show that nothing
// got through.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/nats_server_process.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/event_codec.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The passwords the configuration reads from the server's environment.
const std::map<std::string, std::pair<std::string, std::string>> kUsers = {
    {"gpuaasd", {"GPUAAS_DAEMON_PASSWORD", "daemon-pw-1"}},
    {"bridge", {"GPUAAS_BRIDGE_PASSWORD", "bridge-pw-2"}},
    {"admin", {"GPUAAS_ADMIN_PASSWORD", "admin-pw-3"}},
    {"team-a", {"GPUAAS_TEAM_A_PASSWORD", "team-a-pw-4"}},
    {"team-b", {"GPUAAS_TEAM_B_PASSWORD", "team-b-pw-5"}},
};

// Event time a little after the start: gpuaasd stamps the policy it publishes with the time it
// reads it, and the model's clock never goes back.
const core::EventTime kT0 =
    std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now()) +
    std::chrono::minutes(1);
const bus::Subjects kSubjects("gpuaas");

std::string pod_json(const std::string& ns, const std::string& name) {
  return json({{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", name}, {"namespace", ns}}},
               {"spec",
                {{"nodeName", "gpu-node-1"},
                 {"containers",
                  json::array({{{"name", "main"},
                                {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}},
               {"status", {{"phase", "Running"}}}})
      .dump();
}

std::string job_json(const std::string& ns, const std::string& name) {
  return json({{"apiVersion", "batch/v1"},
               {"kind", "Job"},
               {"metadata",
                {{"name", name},
                 {"namespace", ns},
                 {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
               {"spec", {{"suspend", true}}}})
      .dump();
}

std::string node_json() {
  return json({{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", "gpu-node-1"},
                 {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}},
               {"status",
                {{"capacity", {{"nvidia.com/gpu", "8"}}},
                 {"allocatable", {{"nvidia.com/gpu", "8"}}},
                 {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}})
      .dump();
}

bool has_pod(const core::ClusterModel& m, const std::string& ns, const std::string& name) {
  core::ObjectMeta meta;
  meta.api_version = "v1";
  meta.kind = "Pod";
  meta.namespace_ = ns;
  meta.name = name;
  return m.pod(core::ClusterModel::key_of(meta)) != nullptr;
}

// A plain nats.c connection, to see the server's -ERR answers that the Bus does not surface.
struct RawConnection {
  natsConnection* nc = nullptr;
  ~RawConnection() {
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

class NatsIsolationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const auto& [user, env] : kUsers) ::setenv(env.first.c_str(), env.second.c_str(), 1);
    bus::NatsServerOptions so;
    so.extra_args = {"-c", std::string(GPUAAS_SOURCE_DIR) + "/deploy/nats/nats-server.conf"};
    auto s = bus::NatsServerProcess::start(so);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(s).value().release();

    auto b = connect("gpuaasd");
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    daemon_bus_ = std::move(b).value().release();
    core::DaemonConfig cfg = core::default_config();
    cfg.tick_interval = 0ms;
    cfg.policy_watch_interval = 0ms;
    cfg.policy_files = {std::string(GPUAAS_SOURCE_DIR) + "/policies/examples/two-teams.yaml"};
    daemon_ = new core::Daemon(cfg, *daemon_bus_, std::make_shared<telemetry::Registry>());
    auto started = daemon_->start();
    ASSERT_TRUE(started.is_ok()) << started.message();
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
    delete daemon_bus_;
    daemon_bus_ = nullptr;
    delete server_;
    server_ = nullptr;
  }

  static Result<std::unique_ptr<bus::Bus>> connect(const std::string& user,
                                                   const std::string& inbox_prefix = "") {
    bus::NatsOptions o;
    o.url = server_->url();
    o.name = user;
    o.user = user;
    o.password = kUsers.at(user).second;
    o.inbox_prefix = inbox_prefix;
    o.max_reconnect = 0;
    o.request_timeout = 1000ms;  // a publish the server drops is never acknowledged
    return bus::connect_nats(o);
  }
  // A tenant connects with the inbox prefix its permissions allow.
  static std::unique_ptr<bus::Bus> tenant(const std::string& ns) {
    auto b = connect(ns, "_INBOX_" + ns);
    EXPECT_TRUE(b.is_ok()) << b.status().message();
    return b.is_ok() ? std::move(b).value() : nullptr;
  }

  static std::unique_ptr<RawConnection> raw(const std::string& user) {
    auto c = std::make_unique<RawConnection>();
    natsOptions* o = nullptr;
    EXPECT_EQ(natsOptions_Create(&o), NATS_OK);
    natsOptions_SetURL(o, server_->url().c_str());
    natsOptions_SetUserInfo(o, user.c_str(), kUsers.at(user).second.c_str());
    natsOptions_SetMaxReconnect(o, 0);
    if (user.starts_with("team-")) natsOptions_SetCustomInboxPrefix(o, ("_INBOX_" + user).c_str());
    EXPECT_EQ(natsConnection_Connect(&c->nc, o), NATS_OK) << user;
    natsOptions_Destroy(o);
    return c;
  }
  // What the server answered to everything sent so far: its -ERR text, or "" when none.
  static std::string server_error(RawConnection& c) {
    (void)natsConnection_FlushTimeout(c.nc, 5000);  // the PONG comes after any -ERR
    const char* text = nullptr;
    natsStatus s = natsConnection_GetLastError(c.nc, &text);
    return s == NATS_NOT_PERMITTED && text != nullptr ? std::string(text) : std::string();
  }
  static std::string publish_error(const std::string& user, const std::string& subject) {
    auto c = raw(user);
    natsConnection_PublishString(c->nc, subject.c_str(), "{}");
    return server_error(*c);
  }
  static std::string subscribe_error(const std::string& user, const std::string& subject) {
    auto c = raw(user);
    natsSubscription* sub = nullptr;
    natsConnection_SubscribeSync(&sub, c->nc, subject.c_str());
    std::string e = server_error(*c);
    natsSubscription_Destroy(sub);
    return e;
  }

  static void publish_object(bus::Bus& b, const std::string& ns, const std::string& kind,
                             const std::string& object, const std::string& id) {
    auto ev = core::make_object_event(core::ChangeType::kAdded, object, id, "test", kT0);
    auto ack = b.publish_stored(core::encode_event(ev, kSubjects.events(ns, kind)), id);
    ASSERT_TRUE(ack.is_ok()) << ack.status().message();
  }
  static void drain() {
    for (int i = 0; i < 1000; ++i) {
      auto n = daemon_->step(200ms);
      ASSERT_TRUE(n.is_ok()) << n.status().message();
      if (*n == 0) return;
    }
  }
  // The subjects of every message in the event stream, read by the administrator.
  static std::vector<std::string> stored_subjects() {
    auto admin = connect("admin");
    EXPECT_TRUE(admin.is_ok());
    std::vector<std::string> out;
    if (!admin.is_ok()) return out;
    auto reader = (*admin)->open_reader("GPUAAS_EVENTS", 1);
    EXPECT_TRUE(reader.is_ok()) << reader.status().message();
    if (!reader.is_ok()) return out;
    for (int round = 0; round < 100; ++round) {
      auto batch = (*reader)->fetch(256, 500ms);
      if (!batch.is_ok() || (*batch)->size() == 0) break;
      for (std::size_t i = 0; i < (*batch)->size(); ++i) out.emplace_back((*batch)->subject(i));
    }
    return out;
  }
  static Result<json> ask(bus::Bus& b, const std::string& subject, const std::string& body = "") {
    auto reply = b.request({subject, {}, body}, 2000ms);
    if (!reply) return reply.status();
    return json::parse(reply->data);
  }

  static inline bus::NatsServerProcess* server_ = nullptr;
  static inline bus::Bus* daemon_bus_ = nullptr;
  static inline core::Daemon* daemon_ = nullptr;
};

TEST_F(NatsIsolationTest, ATenantPublishesOnlyIntoItsOwnNamespace) {
  const std::string violation = "Permissions Violation for Publish to ";
  for (const std::string subject :
       {"gpuaas.v1.events.team-b.Pod", "gpuaas.v1.events._cluster.Node",
        "gpuaas.v1.events._cluster.PolicySet", "gpuaas.v1.metrics.team-a",
        "gpuaas.v1.metrics.team-b", "gpuaas.v1.metrics._cluster", "gpuaas.v1.ticks",
        "gpuaas.v1.actions.team-a.Job", "gpuaas.v1.status.team-a.Job",
        "gpuaas.v1.deadletter.team-b", "gpuaas.v1.api.state", "gpuaas.v1.api.state.team-b",
        "$JS.API.STREAM.INFO.GPUAAS_EVENTS"}) {
    EXPECT_NE(publish_error("team-a", subject).find(violation + "\"" + subject + "\""),
              std::string::npos)
        << subject << ": " << publish_error("team-a", subject);
  }
  // Through gpuaasctl's path: the stored publish is never acknowledged.
  auto a = tenant("team-a");
  ASSERT_TRUE(a);
  auto ev = core::make_object_event(core::ChangeType::kAdded, pod_json("team-b", "intruder"),
                                    "ev-intruder", "test", kT0);
  EXPECT_FALSE(
      a->publish_stored(core::encode_event(ev, kSubjects.events("team-b", "Pod")), "ev-intruder")
          .is_ok());
  // Its own namespace is open to it.
  EXPECT_EQ(publish_error("team-a", "gpuaas.v1.api.state.team-a"), "");
  publish_object(*a, "team-a", "Pod", pod_json("team-a", "own-pod"), "ev-own-pod");
  drain();
  // Nothing of team-b's namespace and no samples reached the stream, nor the model.
  for (const auto& s : stored_subjects()) {
    EXPECT_EQ(s.find("team-b"), std::string::npos) << s;
    EXPECT_EQ(s.find(".metrics."), std::string::npos) << s;
  }
  daemon_->read([](const core::ClusterModel& m) {
    EXPECT_FALSE(has_pod(m, "team-b", "intruder"));
    EXPECT_TRUE(has_pod(m, "team-a", "own-pod"));
  });
}

TEST_F(NatsIsolationTest, ATenantReadsOnlyItsOwnActionsStatusAndReplies) {
  const std::string violation = "Permissions Violation for Subscription to ";
  for (const std::string subject :
       {"gpuaas.v1.actions.team-b.>", "gpuaas.v1.status.team-b.>", "gpuaas.v1.actions.>",
        "gpuaas.v1.deadletter.team-b", "gpuaas.v1.events.>", "gpuaas.v1.api.>", "_INBOX.>",
        "_INBOX_team-b.>", ">"}) {
    EXPECT_NE(subscribe_error("team-a", subject).find(violation + "\"" + subject + "\""),
              std::string::npos)
        << subject << ": " << subscribe_error("team-a", subject);
  }
  // Its own actions do arrive.
  auto a = raw("team-a");
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&sub, a->nc, "gpuaas.v1.actions.team-a.>"), NATS_OK);
  EXPECT_EQ(server_error(*a), "");
  auto admin = raw("admin");
  natsConnection_PublishString(admin->nc, "gpuaas.v1.actions.team-a.Job", "for team-a");
  natsConnection_Flush(admin->nc);
  natsMsg* m = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&m, sub, 5000), NATS_OK);
  EXPECT_EQ(std::string(natsMsg_GetData(m), natsMsg_GetDataLength(m)), "for team-a");
  natsMsg_Destroy(m);
  natsSubscription_Destroy(sub);
  // Without its inbox prefix a tenant's request has nowhere to be answered.
  auto plain = connect("team-a");
  ASSERT_TRUE(plain.is_ok());
  EXPECT_FALSE(ask(**plain, kSubjects.api("state", "team-a")).is_ok());
}

TEST_F(NatsIsolationTest, AForgedObjectIsDeadLetteredAndNotApplied) {
  auto a = tenant("team-a");
  ASSERT_TRUE(a);
  auto watcher = raw("team-a");
  natsSubscription* dead = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&dead, watcher->nc, "gpuaas.v1.deadletter.team-a"),
            NATS_OK);
  ASSERT_EQ(server_error(*watcher), "");
  const uint64_t before = daemon_->stats().deadlettered;
  // team-a's own subject, but the object says it is team-b's.
  publish_object(*a, "team-a", "Pod", pod_json("team-b", "forged"), "ev-forged");
  drain();
  EXPECT_EQ(daemon_->stats().deadlettered, before + 1);
  daemon_->read([](const core::ClusterModel& m) {
    EXPECT_FALSE(has_pod(m, "team-b", "forged"));
    EXPECT_FALSE(has_pod(m, "team-a", "forged"));
  });
  // The dead letter goes to the namespace that sent it.
  natsMsg* m = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&m, dead, 5000), NATS_OK);
  v1::DeadLetter dl;
  ASSERT_TRUE(dl.ParseFromArray(natsMsg_GetData(m), natsMsg_GetDataLength(m)));
  EXPECT_NE(dl.reason().find("does not belong on this subject"), std::string::npos) << dl.reason();
  natsMsg_Destroy(m);
  natsSubscription_Destroy(dead);
}

TEST_F(NatsIsolationTest, ScopedAnswersShowATenantOnlyItsNamespace) {
  auto bridge = connect("bridge");
  ASSERT_TRUE(bridge.is_ok());
  publish_object(**bridge, "", "Node", node_json(), "ev-node");
  for (const std::string ns : {"team-a", "team-b"}) {
    auto t = tenant(ns);
    ASSERT_TRUE(t);
    publish_object(*t, ns, "Job", job_json(ns, "job-" + ns), "ev-job-" + ns);
    publish_object(*t, ns, "Pod", pod_json(ns, "pod-" + ns), "ev-pod-" + ns);
  }
  // An hour of event time, so the ledger has GPU-hours in it.
  auto admin = connect("admin");
  ASSERT_TRUE(admin.is_ok());
  auto tick = core::make_event("tick-1", "test", kT0 + std::chrono::hours(1));
  tick.mutable_queue()->mutable_tick()->set_sequence(1);
  ASSERT_TRUE(
      (*admin)->publish_stored(core::encode_event(tick, kSubjects.ticks()), "tick-1").is_ok());
  drain();

  auto a = tenant("team-a");
  ASSERT_TRUE(a);
  auto state = ask(*a, kSubjects.api("state", "team-a"));
  ASSERT_TRUE(state.is_ok()) << state.status().message();
  EXPECT_EQ((*state)["namespace"], "team-a");
  ASSERT_FALSE((*state)["workloads"].empty());
  for (const auto& w : (*state)["workloads"]) EXPECT_EQ(w["namespace"], "team-a");
  EXPECT_EQ(state->dump().find("team-b"), std::string::npos) << state->dump();

  auto report = ask(*a, kSubjects.api("report", "team-a"));
  ASSERT_TRUE(report.is_ok()) << report.status().message();
  EXPECT_EQ(report->dump().find("team-b"), std::string::npos) << report->dump();
  ASSERT_FALSE((*report)["tenants"].empty()) << report->dump();
  for (const auto& t : (*report)["tenants"])
    for (const auto& p : t["projects"]) EXPECT_EQ(p["namespace"], "team-a");

  // Another namespace's workload is "not found", exactly as a name that does not exist.
  auto other = ask(*a, kSubjects.api("explain", "team-a"), "team-b/job-team-b");
  auto none = ask(*a, kSubjects.api("explain", "team-a"), "team-a/no-such-job");
  ASSERT_TRUE(other.is_ok() && none.is_ok());
  std::string other_text = (*other)["error"].get<std::string>();
  std::string none_text = (*none)["error"].get<std::string>();
  other_text.replace(other_text.find("team-b/job-team-b"), 17, "X");
  none_text.replace(none_text.find("team-a/no-such-job"), 18, "X");
  EXPECT_EQ(other_text, none_text);

  // Another namespace's scope, or the whole cluster's, cannot even be asked.
  EXPECT_FALSE(ask(*a, kSubjects.api("state", "team-b")).is_ok());
  EXPECT_FALSE(ask(*a, kSubjects.api("state")).is_ok());
  EXPECT_FALSE(ask(*a, kSubjects.api("report")).is_ok());

  // The administrator sees both.
  auto all = ask(**admin, kSubjects.api("state"));
  ASSERT_TRUE(all.is_ok()) << all.status().message();
  std::set<std::string> namespaces;
  for (const auto& w : (*all)["workloads"]) namespaces.insert(w["namespace"].get<std::string>());
  EXPECT_TRUE(namespaces.count("team-a") && namespaces.count("team-b")) << all->dump();
  auto full = ask(**admin, kSubjects.api("report"));
  ASSERT_TRUE(full.is_ok());
  EXPECT_NE(full->dump().find("team-b"), std::string::npos) << full->dump();
}

// gpuaasctl as a tenant: its connection flags, the scoped API, and no secret in its errors.
TEST_F(NatsIsolationTest, GpuaasctlAsATenant) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpuaas-isolation-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "right") << kUsers.at("team-a").second << "\n";
  std::ofstream(dir / "wrong") << "not-the-password-xyz\n";
  const std::string ctl = testing::bin_dir() + "/gpuaasctl --server " + server_->url() +
                          " --user team-a --inbox-prefix _INBOX_team-a --scope team-a";
  auto r =
      testing::run_command(ctl + " --password-file " + (dir / "right").string() + " state --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto state = json::parse(r.out);
  EXPECT_EQ(state["namespace"], "team-a");
  EXPECT_EQ(r.out.find("team-b"), std::string::npos) << r.out;
  // The human view of a namespace's state.
  r = testing::run_command(ctl + " --password-file " + (dir / "right").string() + " state");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("NAMESPACE team-a"), std::string::npos) << r.out;
  // A wrong password: exit 3, the server's reason, and not the password.
  r = testing::run_command(ctl + " --password-file " + (dir / "wrong").string() + " state 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("Authorization"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not-the-password-xyz"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuaas
