// High availability on the production configuration: deploy/kubernetes/nats-config.yaml as three
// nats-servers on 127.0.0.1 (its cluster routes, monitoring and listen addresses rewritten to
// local ports; its accounts, users and permissions as shipped), two gpuaasd with
// deploy/kubernetes/gpuaasd-config.yaml (three replicas of every stream, snapshot and the lease),
// and the soak's traffic (tools/gpuaas-bench/soak_traffic.hpp: 1,000 GPU nodes with their
// dcgm-exporter scrapes, Jobs arriving, admitted, running and deleted) published as the bridge
// user at the soak's rate for two minutes. Halfway, the leading gpuaasd is killed with SIGKILL.
// Nothing is lost (every event acknowledged by the durable consumer, none dead-lettered, no Job
// given up for want of an admission) and nothing is repeated (each decision id once in the
// actions stream); the standby leads with a higher epoch. Should the servers stall past the
// lease's TTL, the survivor stands by and leads again in the same process.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "failover_support.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"
#include "soak_traffic.hpp"

namespace gpuaas::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::string kSource = GPUAAS_SOURCE_DIR;
constexpr double kRate = bench::kSoakDefaultRate;  // events per second, all kinds together
constexpr auto kRun = 120s;
constexpr auto kKillAt = 60s;

std::string configmap_value(const std::string& file, const std::string& name,
                            const std::string& key) {
  for (const auto& doc : YAML::LoadAllFromFile(file)) {
    if (doc["kind"] && doc["kind"].as<std::string>() == "ConfigMap" &&
        doc["metadata"]["name"].as<std::string>() == name && doc["data"][key])
      return doc["data"][key].as<std::string>();
  }
  ADD_FAILURE() << file << " has no ConfigMap " << name << " with " << key;
  return "";
}

// The shipped text must still hold `from`: a test that rewrote nothing would test nothing.
void rewrite(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "nats-config.yaml no longer has \"" << from << "\"";
  text.replace(at, from.size(), to);
}

std::string password_of(const std::string& var) { return "test-" + var; }

// The three servers; every $GPUAAS_..._PASSWORD of the configuration set in the environment, as
// the StatefulSet sets it from the Secret.
void start_servers(const std::string& dir,
                   std::vector<std::unique_ptr<bus::NatsServerProcess>>& out) {
  const std::string conf = configmap_value(kSource + "/deploy/kubernetes/nats-config.yaml",
                                           "nats-config", "nats-server.conf");
  const std::regex var(R"(\$(GPUAAS_[A-Z_]+_PASSWORD))");
  for (auto it = std::sregex_iterator(conf.begin(), conf.end(), var); it != std::sregex_iterator();
       ++it)
    ::setenv((*it)[1].str().c_str(), password_of((*it)[1].str()).c_str(), 1);
  std::vector<int> routes, monitors;
  for (int i = 0; i < 3; ++i) {
    routes.push_back(bus::NatsServerProcess::free_port());
    monitors.push_back(bus::NatsServerProcess::free_port());
  }
  for (int i = 0; i < 3; ++i) {
    std::string c = conf;
    const std::string port = std::to_string(routes[static_cast<std::size_t>(i)]);
    rewrite(c, "server_name: $SERVER_NAME", "server_name: nats-" + std::to_string(i));
    rewrite(c, "host: 0.0.0.0", "host: 127.0.0.1");
    rewrite(c, "http: 8222",
            "http: 127.0.0.1:" + std::to_string(monitors[static_cast<std::size_t>(i)]));
    rewrite(c, "listen: 0.0.0.0:6222", "listen: 127.0.0.1:" + port);
    for (int j = 0; j < 3; ++j)
      rewrite(c, "nats-route://nats-" + std::to_string(j) + ".nats.gpuaas-system.svc:6222",
              "nats-route://127.0.0.1:" + std::to_string(routes[static_cast<std::size_t>(j)]));
    if (::testing::Test::HasFatalFailure()) return;
    const std::string file = dir + "/nats-" + std::to_string(i) + ".conf";
    std::ofstream(file) << c;
    bus::NatsServerOptions so;
    so.extra_args = {"-c", file};
    auto s = bus::NatsServerProcess::start(so);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    out.push_back(std::move(s).value());
  }
}

// gpuaasd-config.yaml with the test's paths: its password in a file, the policy from the stream
// (the scene publishes it, as the soak does), and no clock of its own (the soak's traffic carries
// the ticks gpuaasd would publish). Server, admin and plugins are given on the command line.
std::string daemon_config(const std::string& dir) {
  YAML::Node y = YAML::Load(configmap_value(kSource + "/deploy/kubernetes/gpuaasd-config.yaml",
                                            "gpuaasd-config", "gpuaasd.yaml"));
  std::ofstream(dir + "/gpuaasd-password") << password_of("GPUAAS_DAEMON_PASSWORD");
  y["nats"]["passwordFile"] = dir + "/gpuaasd-password";
  y.remove("policies");
  y["policyFromStream"] = true;
  y["policyWatchInterval"] = "0s";
  y["tickInterval"] = "0s";
  const std::string path = dir + "/gpuaasd.yaml";
  std::ofstream(path) << y;
  return path;
}

bus::NatsOptions login(const std::string& urls, const std::string& user, const std::string& var) {
  bus::NatsOptions o;
  o.url = urls;
  o.user = user;
  o.password = password_of(var);
  o.reconnect_wait = 100ms;
  o.request_timeout = 2s;
  return o;
}

struct Admission {
  std::string ns, name, patch;
  Clock::time_point at;
};

TEST(HaOnProductionNats, LeaderKilledUnderLoadLosesNothingAndRepeatsNothing) {
  const std::string dir = temp_dir("ha-production");
  std::vector<std::unique_ptr<bus::NatsServerProcess>> servers;
  start_servers(dir, servers);
  if (HasFatalFailure()) return;
  std::string urls;
  for (const auto& s : servers) urls += (urls.empty() ? "" : ",") + s->url();
  const std::string config = daemon_config(dir);
  core::DaemonConfig cfg = core::default_config();
  ASSERT_TRUE(core::load_config_file(config, cfg));
  ASSERT_EQ(cfg.events_stream.replicas, 3);

  auto admin = bus::connect_nats(login(urls, "admin", "GPUAAS_ADMIN_PASSWORD"));
  ASSERT_TRUE(admin.is_ok()) << admin.status().message();
  auto bridge = bus::connect_nats(login(urls, "bridge", "GPUAAS_BRIDGE_PASSWORD"));
  ASSERT_TRUE(bridge.is_ok()) << bridge.status().message();
  ASSERT_TRUE(ensure_streams(**admin, cfg));  // waits for the meta leader

  // The scene: the policy and 1,000 nodes, before the daemons start.
  bench::SoakMix mix;
  mix.nodes = 1000;
  auto node = kube::read_manifests(shared_dir() + "/manifests/gpu-node/virtual-gpu-node.yaml");
  ASSERT_TRUE(node.is_ok() && !node->empty());
  std::ofstream(dir + "/policy.yaml") << bench::soak_policy_yaml(mix);
  auto policy = core::policy_set_object({dir + "/policy.yaml"});
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  bench::SoakTraffic traffic(mix, cfg.subject_root, json::parse((*node)[0].json),
                             wire::EventTime(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())));
  const auto scene = traffic.setup(*policy);
  for (const auto& m : scene)
    ASSERT_TRUE((*bridge)->publish_stored_async(m, std::string(*m.header("ce-id"))));
  ASSERT_TRUE((*bridge)->wait_stored(60s));

  auto start_daemon = [&](const std::string& name) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config, "--server", urls,
                                 "--admin", "", "--plugins", bin_dir() + "/../plugins"},
        dir + "/" + name + ".log");
  };
  std::vector<std::unique_ptr<ChildProcess>> daemons;
  daemons.push_back(start_daemon("a"));
  daemons.push_back(start_daemon("b"));
  auto leader_index = [&] {
    for (std::size_t i = 0; i < daemons.size(); ++i)
      if (daemons[i] && daemons[i]->log().find("took over") != std::string::npos) return int(i);
    return -1;
  };
  auto position = [&] {
    return (*admin)->consumer_position(
        {.stream = cfg.events_stream.name, .durable = cfg.intake.durable});
  };
  ASSERT_TRUE(wait_until(
      [&] {
        auto p = position();
        return leader_index() >= 0 && p.is_ok() && p->ack_floor >= scene.size();
      },
      60s))
      << daemons[0]->log() << daemons[1]->log();

  // Admissions as they arrive: each Job then runs, ends and is deleted.
  std::mutex mu;
  std::vector<Admission> inbox;
  auto sub = (*admin)->subscribe(
      bus::Subjects(cfg.subject_root).all(bus::SubjectCategory::kActions),
      [&](const bus::Message& m) {
        v1::Action a;
        if (!a.ParseFromArray(m.data.data(), static_cast<int>(m.data.size()))) return;
        if (a.target().kind() != "Job" || a.operation() != v1::Action::MERGE_PATCH) return;
        json body = json::parse(a.body_json(), nullptr, false);
        if (!body.is_object() || body.value("spec", json::object()).value("suspend", true)) return;
        std::lock_guard lock(mu);
        inbox.push_back({a.target().namespace_(), a.target().name(), a.body_json(), Clock::now()});
      });
  ASSERT_TRUE(sub.is_ok()) << sub.status().message();

  const auto start = Clock::now();
  auto handle_admissions = [&] {
    std::vector<Admission> got;
    {
      std::lock_guard lock(mu);
      got.swap(inbox);
    }
    for (auto& a : got) traffic.admitted(a.ns, a.name, a.patch, a.at - start, a.at);
  };
  uint64_t published = 0;
  int killed = -1;
  const std::string ticks = bus::Subjects(cfg.subject_root).ticks();
  for (int64_t k = 1;; ++k) {
    const auto now = Clock::now();
    if (now >= start + kRun) break;
    handle_admissions();
    if (killed < 0 && now >= start + kKillAt) {
      killed = leader_index();
      ASSERT_GE(killed, 0);
      daemons[static_cast<std::size_t>(killed)]->signal(SIGKILL);
      std::cout << "[ ha ] killed the leader after " << published << " events\n";
    }
    const auto owed =
        static_cast<uint64_t>(kRate * std::chrono::duration<double>(now - start).count());
    for (; published < owed; ++published) {
      bus::Message m = traffic.next(now - start, now);
      // Ticks are gpuaasd's to publish in production; the soak's come from an administrator.
      bus::Bus& by = m.subject == ticks ? **admin : **bridge;
      auto st = by.publish_stored_async(m, std::string(*m.header("ce-id")));
      ASSERT_TRUE(st) << st.message();
    }
    for (bus::Bus* b : {&**bridge, &**admin}) {
      auto st = b->wait_stored(30s);
      ASSERT_TRUE(st) << st.message();
    }
    std::this_thread::sleep_until(start + 20ms * k);
  }
  const int survivor = 1 - killed;
  ASSERT_TRUE(daemons[static_cast<std::size_t>(survivor)]->alive())
      << daemons[static_cast<std::size_t>(survivor)]->log();

  // Drain: the survivor acknowledges every event (bounded).
  ASSERT_TRUE(wait_until(
      [&] {
        handle_admissions();
        auto p = position();
        return p.is_ok() && p->ack_floor == p->stream_last;
      },
      120s))
      << daemons[static_cast<std::size_t>(survivor)]->log();
  std::this_thread::sleep_for(1s);  // the last admissions in flight
  handle_admissions();
  sub->reset();

  const auto p = position();
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->stream_last, scene.size() + published) << "an event was stored twice or lost";
  auto dead_reader = (*admin)->open_reader(cfg.deadletter_stream.name, 1);
  ASSERT_TRUE(dead_reader.is_ok());
  auto dead_batch = (*dead_reader)->fetch(10, 500ms);
  EXPECT_TRUE(!dead_batch.is_ok() || (*dead_batch)->size() == 0) << "events were dead-lettered";

  int repeats = 0;
  const auto actions = stored_actions(**admin, cfg.actions_stream.name, "", &repeats);
  EXPECT_EQ(repeats, 0) << "a decision reached the actions stream twice";
  std::set<uint64_t> epochs;
  for (const auto& [id, epoch] : actions) epochs.insert(epoch);
  // One epoch per leadership: two, or more when the survivor lost the lease to a stalled server
  // (renewals unanswered for a TTL) and won it back.
  EXPECT_GE(epochs.size(), 2u) << "one epoch per leader";
  int lost = 0;
  for (const auto& d : daemons) {
    const std::string log = d->log();
    for (auto at = log.find("lost the lease"); at != std::string::npos;
         at = log.find("lost the lease", at + 1))
      ++lost;
  }
  EXPECT_LE(epochs.size(), 2u + static_cast<std::size_t>(lost)) << "an epoch without a leadership";
  const auto& c = traffic.counts();
  int after_kill = 0;
  for (double t : traffic.latency_times_s())
    after_kill += t > std::chrono::seconds(kKillAt).count();
  EXPECT_GT(after_kill, 0) << "the standby admitted nothing";
  EXPECT_EQ(c.jobs_given_up, 0u) << "Jobs waited past the soak's admission timeout";
  EXPECT_GT(c.jobs_admitted, 100u);
  std::cout << "[ ha ] " << published << " events, " << actions.size() << " actions, "
            << c.jobs_submitted << " Jobs submitted, " << c.jobs_admitted << " admitted ("
            << after_kill << " after the kill), " << c.jobs_given_up << " given up; a leader lost "
            << "the lease " << lost << " time(s)\n";
  EXPECT_EQ(daemons[static_cast<std::size_t>(survivor)]->stop(), 0);
}

}  // namespace
}  // namespace gpuaas::testing
