// Tenant isolation with the shipped server configuration (deploy/nats/nats-server.conf): a real
// nats-server started with that file, a real core::Daemon with the plugins connected as its own
// user, tenants team-a and team-b in accounts of their own. Each attack a hostile tenant tried is
// here: what it publishes stays in its account unless the GPUAAS account exports it, replies it
// names never land in the GPUAAS account (the streams' message counts are read before and after),
// and what reaches gpuaasd is checked there (dead letters, the model, the clock).
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
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The passwords the configuration reads from the server's environment, made for this run. The
// server parses a variable's value as configuration text, so each begins with a letter, as the
// install guide makes them: a UUID that began with digits read as a number or a date, and the
// server did not start (one run in three).
std::string password() { return "p" + wire::random_uuid(); }
const std::map<std::string, std::pair<std::string, std::string>> kUsers = {
    {"gpuaasd", {"GPUAAS_DAEMON_PASSWORD", password()}},
    {"bridge", {"GPUAAS_BRIDGE_PASSWORD", password()}},
    {"admin", {"GPUAAS_ADMIN_PASSWORD", password()}},
    {"team-a", {"GPUAAS_TEAM_A_PASSWORD", password()}},
    {"team-b", {"GPUAAS_TEAM_B_PASSWORD", password()}},
};

// Event time a little after the start: gpuaasd stamps the policy it publishes with the time it
// reads it, and the model's clock never goes back.
const wire::EventTime kT0 =
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
               {"spec",
                {{"suspend", true},
                 {"parallelism", 1},
                 {"template",
                  {{"spec",
                    {{"containers",
                      json::array(
                          {{{"name", "main"},
                            // A GPU is asked in limits: the API server refuses a request
                            // of an extended resource without one.
                            {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}}}}}})
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
    // A free port can be taken by a test running beside this one before the server binds it:
    // each try picks another.
    auto s = bus::NatsServerProcess::start(so);
    for (int attempt = 1; attempt < 3 && !s.is_ok(); ++attempt)
      s = bus::NatsServerProcess::start(so);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(s).value().release();

    host_ = new host::PluginHost(nullptr);
    host_->load_directory(GPUAAS_BIN_DIR "/../plugins");
    ASSERT_FALSE(host_->plugins().empty()) << "the plugins are not built";
    interpreter_ = new core::PluginInterpreter(*host_);
    auto b = connect("gpuaasd");
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    daemon_bus_ = std::move(b).value().release();
    core::DaemonConfig cfg = core::default_config();
    cfg.tick_interval = 0ms;
    cfg.policy_watch_interval = 0ms;
    cfg.policy_files = {std::string(GPUAAS_SOURCE_DIR) + "/policies/examples/two-teams.yaml"};
    daemon_ =
        new core::Daemon(cfg, *daemon_bus_, std::make_shared<telemetry::Registry>(), interpreter_);
    auto started = daemon_->start();
    ASSERT_TRUE(started.is_ok()) << started.message();
    // The cluster as the bridge reports it: one 8-GPU node.
    auto bridge = connect("bridge");
    ASSERT_TRUE(bridge.is_ok());
    publish_object(**bridge, kSubjects.events("", "Node"), node_json(), "ev-node");
    drain();
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
    delete daemon_bus_;
    daemon_bus_ = nullptr;
    delete interpreter_;
    interpreter_ = nullptr;
    delete host_;
    host_ = nullptr;
    delete server_;
    server_ = nullptr;
  }

  static Result<std::unique_ptr<bus::Bus>> connect(const std::string& user) {
    bus::NatsOptions o;
    o.url = server_->url();
    o.name = user;
    o.user = user;
    o.password = kUsers.at(user).second;
    o.max_reconnect = 0;
    o.request_timeout = 1000ms;  // a publish that reaches no stream is never acknowledged
    return bus::connect_nats(o);
  }
  static std::unique_ptr<bus::Bus> tenant(const std::string& ns) {
    auto b = connect(ns);
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

  static void publish_object(bus::Bus& b, const std::string& subject, const std::string& object,
                             const std::string& id, wire::EventTime at = kT0,
                             wire::ChangeType change = wire::ChangeType::kAdded) {
    auto ev = wire::make_object_event(change, object, id, "test", at);
    auto ack = b.publish_stored(wire::encode_event(ev, subject), id);
    ASSERT_TRUE(ack.is_ok()) << subject << ": " << ack.status().message();
  }
  static void drain() {
    for (int i = 0; i < 1000; ++i) {
      auto n = daemon_->step(200ms);
      ASSERT_TRUE(n.is_ok()) << n.status().message();
      if (*n == 0) return;
    }
  }
  // Messages in a stream, from JetStream's own stream info, asked by the administrator.
  static int64_t stream_messages(const std::string& stream) {
    auto admin = raw("admin");
    natsMsg* reply = nullptr;
    std::string subject = "$JS.API.STREAM.INFO." + stream;
    EXPECT_EQ(natsConnection_RequestString(&reply, admin->nc, subject.c_str(), "", 2000), NATS_OK);
    if (reply == nullptr) return -1;
    json info = json::parse(std::string(natsMsg_GetData(reply), natsMsg_GetDataLength(reply)));
    natsMsg_Destroy(reply);
    return info["state"]["messages"].get<int64_t>();
  }
  static std::map<std::string, int64_t> streams() {
    std::map<std::string, int64_t> out;
    for (const char* s : {"GPUAAS_EVENTS", "GPUAAS_ACTIONS", "GPUAAS_DEADLETTER"})
      out[s] = stream_messages(s);
    return out;
  }
  static Result<json> ask(bus::Bus& b, const std::string& subject, const std::string& body = "") {
    auto reply = b.request({subject, {}, body}, 2000ms);
    if (!reply) return reply.status();
    return json::parse(reply->data);
  }
  // A request whose reply subject the asker chooses, answered or not; then a plain request on the
  // same endpoint, whose answer shows that gpuaasd took the first one (one subscription, in
  // order).
  static void request_with_reply(RawConnection& c, const std::string& subject,
                                 const std::string& reply, const std::string& body = "") {
    ASSERT_EQ(natsConnection_PublishRequest(c.nc, subject.c_str(), reply.c_str(), body.data(),
                                            static_cast<int>(body.size())),
              NATS_OK);
    natsMsg* answer = nullptr;
    ASSERT_EQ(natsConnection_Request(&answer, c.nc, subject.c_str(), "", 0, 5000), NATS_OK)
        << subject;
    natsMsg_Destroy(answer);
  }
  // The subjects of the messages a subscriber got until none came for `wait` (at most 200).
  static std::vector<std::string> received(natsSubscription* sub, std::chrono::milliseconds wait) {
    std::vector<std::string> out;
    for (natsMsg* m = nullptr;
         out.size() < 200 &&
         natsSubscription_NextMsg(&m, sub, static_cast<int64_t>(wait.count())) == NATS_OK;) {
      out.emplace_back(natsMsg_GetSubject(m));
      natsMsg_Destroy(m);
    }
    return out;
  }
  static bool has_object(const std::string& api_version, const std::string& kind,
                         const std::string& ns, const std::string& name) {
    core::ObjectMeta meta;
    meta.api_version = api_version;
    meta.kind = kind;
    meta.namespace_ = ns;
    meta.name = name;
    return daemon_->read([&](const core::ClusterModel& m) {
      return m.object(core::ClusterModel::key_of(meta)) != nullptr;
    });
  }
  // The reason of the next dead letter on deadletter.<ns> (read by the tenant itself).
  static std::string next_deadletter(natsSubscription* sub) {
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, sub, 5000) != NATS_OK) return "(none)";
    v1::DeadLetter dl;
    EXPECT_TRUE(dl.ParseFromArray(natsMsg_GetData(m), natsMsg_GetDataLength(m)));
    natsMsg_Destroy(m);
    return dl.reason();
  }
  struct Watch {
    std::unique_ptr<RawConnection> conn;
    natsSubscription* sub = nullptr;
    ~Watch() { natsSubscription_Destroy(sub); }
  };
  static std::unique_ptr<Watch> watch(const std::string& user, const std::string& subject) {
    auto w = std::make_unique<Watch>();
    w->conn = raw(user);
    EXPECT_EQ(natsConnection_SubscribeSync(&w->sub, w->conn->nc, subject.c_str()), NATS_OK);
    EXPECT_EQ(server_error(*w->conn), "");
    return w;
  }

  static inline bus::NatsServerProcess* server_ = nullptr;
  static inline host::PluginHost* host_ = nullptr;
  static inline core::PluginInterpreter* interpreter_ = nullptr;
  static inline bus::Bus* daemon_bus_ = nullptr;
  static inline core::Daemon* daemon_ = nullptr;
};

// Observed state (events, metrics, ticks), other namespaces, actions, status, the unscoped API
// and the server's own APIs are not in a tenant's account: a publish there reaches nobody in the
// GPUAAS account and no stream.
TEST_F(NatsIsolationTest, ATenantReachesOnlyTheSubjectsItsAccountImports) {
  // Everything under gpuaas. that passes in the GPUAAS account (the JetStream API's own traffic,
  // gpuaasd's fetches, is seen by the stream counts instead).
  auto spy = watch("admin", "gpuaas.>");
  const auto before = streams();
  auto a = raw("team-a");
  const std::vector<std::string> foreign = {"gpuaas.v1.events.team-a.Pod",
                                            "gpuaas.v1.events.team-a.ConfigMap",
                                            "gpuaas.v1.events._cluster.Node",
                                            "gpuaas.v1.events._cluster.PolicySet",
                                            "gpuaas.v1.events.team-a.ActionResult",
                                            "gpuaas.v1.metrics.team-a",
                                            "gpuaas.v1.metrics._cluster",
                                            "gpuaas.v1.ticks",
                                            "gpuaas.v1.actions.team-a.Job",
                                            "gpuaas.v1.status.team-a.Job",
                                            "gpuaas.v1.deadletter.team-b",
                                            "gpuaas.v1.submissions.team-b.Job",
                                            "gpuaas.v1.api.state",
                                            "gpuaas.v1.api.state.team-b",
                                            "$JS.API.STREAM.PURGE.GPUAAS_EVENTS",
                                            "$KV.GPUAAS_SNAPSHOT.state_gpuaasd"};
  for (const auto& subject : foreign) natsConnection_PublishString(a->nc, subject.c_str(), "{}");
  EXPECT_EQ(server_error(*a), "");
  EXPECT_EQ(received(spy->sub, 300ms), std::vector<std::string>());
  EXPECT_EQ(streams(), before);
  // gpuaasctl's stored publish of observed state: nothing captures it, so it is never acked.
  auto t = tenant("team-a");
  ASSERT_TRUE(t);
  auto ev = wire::make_object_event(wire::ChangeType::kAdded, pod_json("team-a", "own-pod"),
                                    "ev-own-pod", "test", kT0);
  EXPECT_FALSE(
      t->publish_stored(wire::encode_event(ev, kSubjects.events("team-a", "Pod")), "ev-own-pod")
          .is_ok());
  // Its own submissions are stored, acknowledged and applied.
  publish_object(*t, kSubjects.submissions("team-a", "Job"), job_json("team-a", "own-job"),
                 "ev-own-job");
  drain();
  EXPECT_TRUE(has_object("batch/v1", "Job", "team-a", "own-job"));
  daemon_->read([](const core::ClusterModel& m) { EXPECT_FALSE(has_pod(m, "team-a", "own-pod")); });
}

TEST_F(NatsIsolationTest, ATenantReadsOnlyItsOwnActionsStatusAndDeadLetters) {
  auto a = watch("team-a", ">");
  auto admin = raw("admin");
  for (const char* subject :
       {"gpuaas.v1.actions.team-a.Job", "gpuaas.v1.actions.team-b.Job",
        "gpuaas.v1.status.team-a.Job", "gpuaas.v1.status.team-b.Job", "gpuaas.v1.deadletter.team-a",
        "gpuaas.v1.deadletter.team-b", "gpuaas.v1.events.team-a.Pod",
        "gpuaas.v1.api.plugins.team-b", "_INBOX.anything"})
    natsConnection_PublishString(admin->nc, subject, "x");
  natsConnection_Flush(admin->nc);
  // team-b's answers go to team-b's account: team-a, listening on everything, sees none.
  auto b = tenant("team-b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(ask(*b, kSubjects.api("state", "team-b")).is_ok());
  auto got = received(a->sub, 500ms);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got,
            (std::vector<std::string>{"gpuaas.v1.actions.team-a.Job", "gpuaas.v1.deadletter.team-a",
                                      "gpuaas.v1.status.team-a.Job"}));
  drain();  // the event stream took the administrator's events.team-a.Pod: dead-lettered here
}

TEST_F(NatsIsolationTest, AForgedSubmissionIsDeadLetteredAndNotApplied) {
  auto t = tenant("team-a");
  ASSERT_TRUE(t);
  auto dead = watch("team-a", "gpuaas.v1.deadletter.team-a");
  const uint64_t before = daemon_->stats().deadlettered;
  // team-a's own subject, but the object says it is team-b's.
  publish_object(*t, kSubjects.submissions("team-a", "Job"), job_json("team-b", "forged"),
                 "ev-forged");
  drain();
  EXPECT_EQ(daemon_->stats().deadlettered, before + 1);
  EXPECT_FALSE(has_object("batch/v1", "Job", "team-b", "forged"));
  EXPECT_FALSE(has_object("batch/v1", "Job", "team-a", "forged"));
  EXPECT_NE(next_deadletter(dead->sub).find("does not belong on this subject"), std::string::npos);
}

TEST_F(NatsIsolationTest, ScopedAnswersShowATenantOnlyItsNamespace) {
  auto bridge = connect("bridge");
  ASSERT_TRUE(bridge.is_ok());
  for (const std::string ns : {"team-a", "team-b"}) {
    auto t = tenant(ns);
    ASSERT_TRUE(t);
    publish_object(*t, kSubjects.submissions(ns, "Job"), job_json(ns, "job-" + ns), "ev-job-" + ns);
    publish_object(**bridge, kSubjects.events(ns, "Pod"), pod_json(ns, "pod-" + ns),
                   "ev-pod-" + ns);
  }
  // An hour of event time, so the ledger has GPU-hours in it.
  auto admin = connect("admin");
  ASSERT_TRUE(admin.is_ok());
  auto tick = wire::make_event("tick-1", "test", kT0 + std::chrono::hours(1));
  tick.mutable_queue()->mutable_tick()->set_sequence(1);
  ASSERT_TRUE(
      (*admin)->publish_stored(wire::encode_event(tick, kSubjects.ticks()), "tick-1").is_ok());
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

  // The administrator sees both, and may ask for one namespace's view too.
  auto all = ask(**admin, kSubjects.api("state"));
  ASSERT_TRUE(all.is_ok()) << all.status().message();
  std::set<std::string> namespaces;
  for (const auto& w : (*all)["workloads"]) namespaces.insert(w["namespace"].get<std::string>());
  EXPECT_TRUE(namespaces.count("team-a") && namespaces.count("team-b")) << all->dump();
  auto full = ask(**admin, kSubjects.api("report"));
  ASSERT_TRUE(full.is_ok());
  EXPECT_NE(full->dump().find("team-b"), std::string::npos) << full->dump();
  auto scoped = ask(**admin, kSubjects.api("state", "team-b"));
  ASSERT_TRUE(scoped.is_ok());
  EXPECT_EQ((*scoped)["namespace"], "team-b");
  EXPECT_EQ(scoped->dump().find("team-a"), std::string::npos) << scoped->dump();
}

// gpuaasctl as a tenant: its connection flags, a submission, the scoped API, no secret in errors.
TEST_F(NatsIsolationTest, GpuaasctlAsATenant) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpuaas-isolation-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "right") << kUsers.at("team-a").second << "\n";
  std::ofstream(dir / "wrong") << "not-the-password-xyz\n";
  std::ofstream(dir / "job.json") << job_json("team-a", "ctl-job");
  const std::string ctl = testing::bin_dir() + "/gpuaasctl --server " + server_->url() +
                          " --user team-a --scope team-a";
  const std::string right = " --password-file " + (dir / "right").string();
  auto r = testing::run_command(ctl + right + " apply -f " + (dir / "job.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("job/ctl-job submitted"), std::string::npos) << r.out;
  drain();
  EXPECT_TRUE(has_object("batch/v1", "Job", "team-a", "ctl-job"));
  r = testing::run_command(ctl + right + " state --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto state = json::parse(r.out);
  EXPECT_EQ(state["namespace"], "team-a");
  EXPECT_NE(r.out.find("ctl-job"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("team-b"), std::string::npos) << r.out;
  // The human view of a namespace's state.
  r = testing::run_command(ctl + right + " state");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("NAMESPACE team-a"), std::string::npos) << r.out;
  // Observed state is not a tenant's to publish: gpuaasctl says so before it connects.
  std::ofstream(dir / "node.json") << node_json();
  r = testing::run_command(ctl + right + " apply -f " + (dir / "node.json").string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("cluster-scoped"), std::string::npos) << r.out;
  // A wrong password: exit 3, the server's reason, and not the password.
  r = testing::run_command(ctl + " --password-file " + (dir / "wrong").string() + " state 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("Authorization"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not-the-password-xyz"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// (1) A request that is not UTF-8 is answered with an error; the daemon keeps answering.
TEST_F(NatsIsolationTest, ARequestThatIsNotUtf8IsAnsweredWithAnError) {
  const uint64_t refused = daemon_->api_refusals();
  auto a = tenant("team-a");
  ASSERT_TRUE(a);
  auto bad = ask(*a, kSubjects.api("explain", "team-a"), "team-a/\xff");
  ASSERT_TRUE(bad.is_ok()) << bad.status().message();
  EXPECT_NE((*bad)["error"].get<std::string>().find("not valid UTF-8"), std::string::npos);
  auto admin = connect("admin");
  ASSERT_TRUE(admin.is_ok());
  auto latin1 = ask(**admin, kSubjects.api("explain"), "team-b/caf\xe9");
  ASSERT_TRUE(latin1.is_ok()) << latin1.status().message();
  EXPECT_TRUE(latin1->contains("error"));
  EXPECT_EQ(daemon_->api_refusals(), refused + 2);
  auto state = ask(*a, kSubjects.api("state", "team-a"));
  ASSERT_TRUE(state.is_ok()) << state.status().message();
  EXPECT_EQ((*state)["namespace"], "team-a");
}

// (2) Whatever reply subject a tenant names, gpuaasd's answer stays in the tenant's account: the
// streams keep every message, team-b's subjects get nothing. The same replies from inside the
// GPUAAS account (an administrator) are refused by gpuaasd itself.
TEST_F(NatsIsolationTest, ARepliesSubjectCannotAimGpuaasdsAnswer) {
  const std::vector<std::string> replies = {"$JS.API.STREAM.PURGE.GPUAAS_EVENTS",
                                            "$JS.API.STREAM.PURGE.GPUAAS_ACTIONS",
                                            "$JS.API.STREAM.PURGE.GPUAAS_DEADLETTER",
                                            "$JS.API.STREAM.DELETE.GPUAAS_EVENTS",
                                            "$KV.GPUAAS_SNAPSHOT.state_gpuaasd",
                                            "gpuaas.v1.actions.team-b.Job",
                                            "gpuaas.v1.status.team-b.Job",
                                            "gpuaas.v1.deadletter.team-b",
                                            "gpuaas.v1.events._cluster.Node"};
  auto b = watch("team-b", ">");
  const auto before = streams();
  ASSERT_GT(before.at("GPUAAS_EVENTS"), 0);
  auto a = raw("team-a");
  for (const auto& reply : replies)
    for (const char* endpoint : {"state", "plugins", "explain", "report"})
      request_with_reply(*a, kSubjects.api(endpoint, "team-a"), reply);
  EXPECT_EQ(streams(), before);
  EXPECT_EQ(received(b->sub, 300ms), std::vector<std::string>());

  const uint64_t refused = daemon_->api_refusals();
  auto admin = raw("admin");
  for (const auto& reply : replies) request_with_reply(*admin, kSubjects.api("plugins"), reply);
  EXPECT_EQ(streams(), before);
  EXPECT_EQ(daemon_->api_refusals(), refused + replies.size());
}

// (3) JetStream acknowledges a tenant's stored publish to the tenant's own account, whatever
// reply it names: stored, and nothing else changes.
TEST_F(NatsIsolationTest, ATenantsStoredPublishCannotAimJetStreamsAck) {
  const auto before = streams();
  auto a = raw("team-a");
  auto ev = wire::make_object_event(wire::ChangeType::kAdded, job_json("team-a", "aimed"),
                                    "ev-aimed", "test", kT0);
  auto msg = wire::encode_event(ev, kSubjects.submissions("team-a", "Job"));
  for (const char* reply : {"$JS.API.STREAM.PURGE.GPUAAS_EVENTS", "gpuaas.v1.actions.team-b.Job",
                            "$JS.API.STREAM.PURGE.GPUAAS_ACTIONS"})
    ASSERT_EQ(natsConnection_PublishRequest(a->nc, msg.subject.c_str(), reply, msg.data.data(),
                                            static_cast<int>(msg.data.size())),
              NATS_OK);
  ASSERT_EQ(natsConnection_Flush(a->nc), NATS_OK);
  auto after = before;
  after["GPUAAS_EVENTS"] += 3;
  for (int i = 0; i < 50 && streams() != after; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(streams(), after);
  drain();
}

// The same attack against the configuration this project shipped before: tenants and an
// answerer that answers every reply (allow_responses) in one account. The attack succeeds there,
// so the tests above would see it.
TEST(NatsIsolationControl, OneAccountLetsATenantPurgeAStreamThroughAnAnswerer) {
  const std::string dir = testing::temp_dir("isolation-control");
  std::ofstream(dir + "/one-account.conf") << R"(
accounts {
  GPUAAS {
    jetstream: enabled
    users: [
      { user: admin, password: admin-pw }
      { user: answerer, password: answerer-pw,
        permissions: { subscribe: { allow: ["gpuaas.v1.api.>"] }, publish: { allow: [] },
                       allow_responses: true } }
      { user: team-a, password: team-a-pw,
        permissions: { publish: { allow: ["gpuaas.v1.api.*.team-a"] },
                       subscribe: { allow: ["_INBOX_team-a.>"] } } }
    ]
  }
}
)";
  bus::NatsServerOptions so;
  so.extra_args = {"-c", dir + "/one-account.conf"};
  auto server = bus::NatsServerProcess::start(so);
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  auto login = [&](const char* user, const char* pw) {
    natsConnection* nc = nullptr;
    natsOptions* o = nullptr;
    natsOptions_Create(&o);
    natsOptions_SetURL(o, (*server)->url().c_str());
    natsOptions_SetUserInfo(o, user, pw);
    EXPECT_EQ(natsConnection_Connect(&nc, o), NATS_OK) << user;
    natsOptions_Destroy(o);
    return nc;
  };
  natsConnection* admin = login("admin", "admin-pw");
  natsMsg* r = nullptr;
  ASSERT_EQ(natsConnection_RequestString(
                &r, admin, "$JS.API.STREAM.CREATE.EVENTS",
                R"({"name":"EVENTS","subjects":["gpuaas.v1.events.>"],"storage":"memory"})", 2000),
            NATS_OK);
  natsMsg_Destroy(r);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(natsConnection_RequestString(&r, admin, "gpuaas.v1.events.team-a.Job", "{}", 2000),
              NATS_OK);
    natsMsg_Destroy(r);
  }
  auto messages = [&] {
    natsMsg* info = nullptr;
    EXPECT_EQ(natsConnection_RequestString(&info, admin, "$JS.API.STREAM.INFO.EVENTS", "", 2000),
              NATS_OK);
    json j = json::parse(std::string(natsMsg_GetData(info), natsMsg_GetDataLength(info)));
    natsMsg_Destroy(info);
    return j["state"]["messages"].get<int64_t>();
  };
  ASSERT_EQ(messages(), 5);
  // An answerer that answers whatever reply it is given, as gpuaasd did.
  natsConnection* answerer = login("answerer", "answerer-pw");
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&sub, answerer, "gpuaas.v1.api.>"), NATS_OK);
  natsConnection_Flush(answerer);
  natsConnection* tenant = login("team-a", "team-a-pw");
  ASSERT_EQ(natsConnection_PublishRequestString(tenant, "gpuaas.v1.api.plugins.team-a",
                                                "$JS.API.STREAM.PURGE.EVENTS", ""),
            NATS_OK);
  natsConnection_Flush(tenant);
  natsMsg* req = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&req, sub, 5000), NATS_OK);
  ASSERT_EQ(natsConnection_PublishString(answerer, natsMsg_GetReply(req), "{}"), NATS_OK);
  natsMsg_Destroy(req);
  natsConnection_Flush(answerer);
  int64_t left = 5;
  for (int i = 0; i < 50 && (left = messages()) != 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(left, 0) << "the purge through the answerer no longer works: the control is stale";
  natsSubscription_Destroy(sub);
  for (auto* c : {admin, answerer, tenant}) natsConnection_Destroy(c);
  std::filesystem::remove_all(dir);
}

// (4) Nodes are the cluster's: a tenant can neither submit one nor change or delete one, and an
// observed Node is accepted only on the cluster's subject.
TEST_F(NatsIsolationTest, ATenantCannotChangeClusterNodes) {
  auto t = tenant("team-a");
  ASSERT_TRUE(t);
  auto dead = watch("team-a", "gpuaas.v1.deadletter.team-a");
  auto capacity = [] {
    return daemon_->read([](const core::ClusterModel& m) {
      int64_t gpus = 0;
      for (const auto& [name, pool] : m.gpu_pools()) gpus += pool.allocatable_milli;
      return std::make_pair(m.nodes().size(), gpus);
    });
  };
  const auto before = capacity();
  json big = json::parse(node_json());
  big["metadata"]["name"] = "gpu-rogue";
  big["metadata"]["namespace"] = "team-a";
  big["status"]["capacity"]["nvidia.com/gpu"] = "64";
  big["status"]["allocatable"]["nvidia.com/gpu"] = "64";
  publish_object(*t, kSubjects.submissions("team-a", "Node"), big.dump(), "ev-rogue-node");
  json down = json::parse(node_json());
  down["metadata"]["namespace"] = "team-a";
  down["status"]["conditions"][0]["status"] = "False";
  publish_object(*t, kSubjects.submissions("team-a", "Node"), down.dump(), "ev-down-node");
  publish_object(*t, kSubjects.submissions("team-a", "Node"), down.dump(), "ev-del-node", kT0,
                 wire::ChangeType::kDeleted);
  drain();
  EXPECT_EQ(capacity(), before);
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(next_deadletter(dead->sub).find("cluster-scoped"), std::string::npos);
  // Even the bridge's Node must be on the cluster's subject, with no namespace.
  auto bridge = connect("bridge");
  ASSERT_TRUE(bridge.is_ok());
  publish_object(**bridge, kSubjects.events("team-a", "Node"), big.dump(), "ev-ns-node");
  drain();
  EXPECT_EQ(capacity(), before);
  EXPECT_NE(next_deadletter(dead->sub).find("cluster-scoped"), std::string::npos);
}

// (5) A submission is applied at the event clock as it stands; the time it states is shown only.
TEST_F(NatsIsolationTest, ATenantsTimeHasNoAuthority) {
  auto t = tenant("team-a");
  ASSERT_TRUE(t);
  const auto clock = daemon_->read([](const core::ClusterModel& m) { return m.now(); });
  const auto y2036 = wire::EventTime(std::chrono::seconds(2082758400));
  publish_object(*t, kSubjects.submissions("team-a", "Job"), job_json("team-a", "from-2036"),
                 "ev-2036", y2036);
  drain();
  EXPECT_EQ(daemon_->read([](const core::ClusterModel& m) { return m.now(); }), clock);
  core::ObjectMeta meta{
      .api_version = "batch/v1", .kind = "Job", .namespace_ = "team-a", .name = "from-2036"};
  daemon_->read([&](const core::ClusterModel& m) {
    const auto* job = m.object(core::ClusterModel::key_of(meta));
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->meta.annotations.find("gpuaas.io/submitted-at")->second,
              "2036-01-01T00:00:00.000Z");
  });
}

// (6) Capacity is what the bridge reports: a tenant cannot submit Pods, and no Pod may ask for a
// negative quantity or carry ten thousand containers.
TEST_F(NatsIsolationTest, ATenantCannotOccupySharedCapacity) {
  auto requested = [] {
    return daemon_->read([](const core::ClusterModel& m) {
      const auto& r = m.node_requested("gpu-node-1");
      auto it = r.find("nvidia.com/gpu");
      return it == r.end() ? int64_t{0} : it->second;
    });
  };
  const int64_t before = requested();
  auto t = tenant("team-a");
  ASSERT_TRUE(t);
  auto dead = watch("team-a", "gpuaas.v1.deadletter.team-a");
  publish_object(*t, kSubjects.submissions("team-a", "Pod"), pod_json("team-a", "squatter"),
                 "ev-squatter");
  drain();
  EXPECT_NE(next_deadletter(dead->sub).find("observed from the cluster"), std::string::npos);
  auto bridge = connect("bridge");
  ASSERT_TRUE(bridge.is_ok());
  json negative = json::parse(pod_json("team-a", "negative"));
  negative["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "-100";
  publish_object(**bridge, kSubjects.events("team-a", "Pod"), negative.dump(), "ev-negative");
  json many = json::parse(pod_json("team-a", "many"));
  json containers = json::array();
  for (int i = 0; i < 10000; ++i) containers.push_back({{"name", "c" + std::to_string(i)}});
  many["spec"]["containers"] = containers;
  publish_object(**bridge, kSubjects.events("team-a", "Pod"), many.dump(), "ev-many");
  drain();
  EXPECT_NE(next_deadletter(dead->sub).find("is negative"), std::string::npos);
  EXPECT_NE(next_deadletter(dead->sub).find("10000 containers"), std::string::npos);
  EXPECT_EQ(requested(), before);
  daemon_->read([](const core::ClusterModel& m) {
    EXPECT_FALSE(has_pod(m, "team-a", "squatter"));
    EXPECT_FALSE(has_pod(m, "team-a", "negative"));
    EXPECT_FALSE(has_pod(m, "team-a", "many"));
  });
}

// (7) Action results are the bridge's, and ids that are not UTF-8 never reach a decision.
TEST_F(NatsIsolationTest, ATenantCannotSpeakForTheCluster) {
  auto t = tenant("team-a");
  ASSERT_TRUE(t);
  auto dead = watch("team-a", "gpuaas.v1.deadletter.team-a");
  const auto results = daemon_->stats();
  auto ev = wire::make_event("ev-result", "test", kT0);
  auto* r = ev.mutable_queue()->mutable_action_result();
  r->set_outcome(v1::ActionResult::CONFLICT);
  r->mutable_target()->set_kind("RayJob");
  r->mutable_target()->set_namespace_("team-b");
  r->mutable_target()->set_name("bob-ray");
  ev.set_type(std::string(wire::kTypeActionResult));
  ASSERT_TRUE(
      t->publish_stored(wire::encode_event(ev, kSubjects.submissions("team-a", "ActionResult")),
                        "ev-result")
          .is_ok());
  drain();
  EXPECT_NE(next_deadletter(dead->sub).find("observed, not submitted"), std::string::npos);
  EXPECT_EQ(daemon_->stats().action_results_conflict, results.action_results_conflict);

  auto actions = watch("admin", "gpuaas.v1.actions.>");
  auto bad = wire::make_object_event(wire::ChangeType::kAdded, job_json("team-a", "bad-id"),
                                     "ev-\xff\xfe", "test", kT0);
  auto msg = wire::encode_event(bad, kSubjects.submissions("team-a", "Job"));
  ASSERT_TRUE(t->publish_stored(msg, "ev-bad-id").is_ok());
  drain();
  EXPECT_NE(next_deadletter(dead->sub).find("not valid UTF-8"), std::string::npos);
  EXPECT_FALSE(has_object("batch/v1", "Job", "team-a", "bad-id"));
  EXPECT_EQ(received(actions->sub, 200ms), std::vector<std::string>());
}

}  // namespace
}  // namespace gpuaas
