// gpuaasd and gpuaasctl as a user runs them, against a real nats-server.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

using nlohmann::json;

constexpr const char* kGpuNode = R"(apiVersion: v1
kind: Node
metadata:
  name: h100-a
  labels:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
status:
  capacity: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8"}
  allocatable: {cpu: "94", memory: 1000Gi, nvidia.com/gpu: "8"}
  conditions:
  - {type: Ready, status: "True"}
)";

class DaemonEndToEnd : public NatsServerTest {
 protected:
  void SetUp() override {
    dir_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    // Each test gets its own subjects and streams on the shared server.
    root_ = std::string("e2e") + std::to_string(counter_++);
    config_ = dir_ + "/gpuaasd.yaml";
    std::ofstream(config_) << "subjectRoot: " << root_ << "\ntickInterval: " << tick_ << "\n";
  }

  std::unique_ptr<ChildProcess> start_daemon(const std::string& log_name = "gpuaasd.log") {
    auto d = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                                 "--admin", "127.0.0.1:0"},
        dir_ + "/" + log_name);
    return d;
  }
  // gpuaasctl with this test's subject root (hidden flag) and server.
  CommandResult ctl(const std::string& args) {
    return run_command(bin_dir() + "/gpuaasctl --server " + url() + " --subject-root " + root_ +
                       " " + args);
  }
  json state() {
    auto r = ctl("state --json");
    if (r.exit_code != 0) return nullptr;
    return json::parse(r.out, nullptr, false);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }

  std::string dir_;
  std::string root_;
  std::string config_;
  std::string tick_ = "1s";
  static inline int counter_ = 0;
};

TEST_F(DaemonEndToEnd, AppliedGpuNodeShowsInState) {
  auto d = start_daemon();
  ASSERT_TRUE(eventually([&] { return !state().is_null(); })) << d->log();
  auto r = ctl("apply -f " + write("node.yaml", kGpuNode));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "node/h100-a applied\n");
  std::string published = shared_dir() + "/manifests/gpu-node/virtual-gpu-node.yaml";
  ASSERT_EQ(ctl("apply -f " + published).exit_code, 0);
  json s;
  ASSERT_TRUE(eventually([&] {
    s = state();
    return s.is_object() && s["nodes"].size() == 2;
  })) << d->log();
  const json& pool = s["gpus_by_flavor"]["NVIDIA-H100-80GB-HBM3"];
  EXPECT_EQ(pool["capacity"], 8);
  EXPECT_EQ(pool["allocatable"], 8);
  EXPECT_EQ(s["nodes"][0]["name"], "h100-a");
  EXPECT_EQ(s["nodes"][0]["ready"], true);
  EXPECT_EQ(s["nodes"][1]["gpus"]["capacity"], 8);
  // The human view names the node and its product.
  auto table = ctl("state");
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("h100-a"), std::string::npos);
  EXPECT_NE(table.out.find("NVIDIA-H100-80GB-HBM3"), std::string::npos);
  // Deleting returns the model to one node.
  ASSERT_EQ(ctl("delete -f " + write("node2.yaml", kGpuNode)).exit_code, 0);
  EXPECT_TRUE(eventually([&] {
    s = state();
    return s.is_object() && s["nodes"].size() == 1;
  }));
  EXPECT_EQ(d->stop(), 0) << d->log();
}

TEST_F(DaemonEndToEnd, GarbageIsDeadLetteredAndTheDaemonCarriesOn) {
  auto d = start_daemon();
  ASSERT_TRUE(eventually([&] { return !state().is_null(); })) << d->log();
  std::atomic<bool> done{false};
  CommandResult watched;
  std::thread watcher([&] {
    watched = ctl("watch deadletter --count 1 --timeout 15 --json");
    done = true;
  });
  auto bus = bus::connect_nats({.url = url()});
  ASSERT_TRUE(bus.is_ok());
  bus::Subjects subjects(root_);
  // Keep publishing until the watcher has seen one (it may subscribe a moment later).
  ASSERT_TRUE(eventually(
      [&] {
        (void)(*bus)->publish({subjects.events("research", "Pod"), {}, "not an event"});
        (void)(*bus)->flush(std::chrono::seconds(1));
        return done.load();
      },
      std::chrono::seconds(15)));
  watcher.join();
  EXPECT_EQ(watched.exit_code, 0);
  auto line = json::parse(watched.out.substr(0, watched.out.find('\n')), nullptr, false);
  ASSERT_TRUE(line.is_object()) << watched.out;
  EXPECT_EQ(line["subject"], subjects.events("research", "Pod"));
  EXPECT_EQ(line["payload"], "not an event");
  EXPECT_NE(line["reason"].get<std::string>().find("protobuf"), std::string::npos);
  EXPECT_TRUE(d->alive());
  // A good object after the garbage is still applied.
  ASSERT_EQ(ctl("apply -f " + write("node.yaml", kGpuNode)).exit_code, 0);
  EXPECT_TRUE(eventually([&] {
    auto s = state();
    return s.is_object() && s["nodes"].size() == 1 && s["intake"]["deadlettered"] >= 1;
  }));
  // A manifest whose namespace disagrees with its subject is refused by the daemon too.
  auto ev = wire::make_object_event(
      wire::ChangeType::kAdded,
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"tenant-b"}})",
      "forged-1", "test", wire::EventTime(std::chrono::seconds(1)));
  ASSERT_TRUE(
      (*bus)
          ->publish_stored(wire::encode_event(ev, subjects.events("tenant-a", "Pod")), "forged-1")
          .is_ok());
  EXPECT_TRUE(eventually([&] {
    auto s = state();
    return s.is_object() && s["intake"]["deadlettered"] >= 2 && s["pods"]["total"] == 0;
  }));
  EXPECT_EQ(d->stop(), 0);
}

TEST_F(DaemonEndToEnd, CliExitCodes) {
  // 3: nobody listens there.
  int port = bus::NatsServerProcess::free_port();
  auto down =
      run_command(bin_dir() + "/gpuaasctl --server nats://127.0.0.1:" + std::to_string(port) +
                  " state 2>/dev/null");
  EXPECT_EQ(down.exit_code, 3);
  // 3: the server is up but no daemon answers.
  EXPECT_EQ(ctl("state 2>/dev/null").exit_code, 3);
  // 2: usage.
  EXPECT_EQ(ctl("frobnicate 2>/dev/null").exit_code, 2);
  EXPECT_EQ(ctl("watch nothing 2>/dev/null").exit_code, 2);
  // 1: invalid input, with the file and line named.
  EXPECT_EQ(ctl("apply -f /nonexistent.yaml 2>/dev/null").exit_code, 1);
  auto bad =
      run_command(bin_dir() + "/gpuaasctl --server " + url() + " apply -f " +
                  write("bad.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: [\n") + " 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("bad.yaml:"), std::string::npos) << bad.out;
  auto metrics = run_command(bin_dir() + "/gpuaasctl --server " + url() + " push-metrics " +
                             write("bad.prom", "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 5\n") + " 2>&1");
  EXPECT_EQ(metrics.exit_code, 1);
  EXPECT_NE(metrics.out.find("bad.prom:1:"), std::string::npos) << metrics.out;
  // gpuaasd: 2 for bad flags, 1 for a bad policy or config file, with FILE:LINE named.
  EXPECT_EQ(run_command(bin_dir() + "/gpuaasd --frobnicate 2>/dev/null").exit_code, 2);
  auto policy = run_command(bin_dir() + "/gpuaasd --server embedded --admin '' --policy " +
                            write("bad-policy.yaml", "apiVersion: v1\nkind: [\n") + " 2>&1");
  EXPECT_EQ(policy.exit_code, 1);
  EXPECT_NE(policy.out.find("bad-policy.yaml:3:"), std::string::npos) << policy.out;
  auto config = run_command(bin_dir() + "/gpuaasd --config " +
                            write("bad-config.yaml", "server: x\nbogus: 1\n") + " 2>&1");
  EXPECT_EQ(config.exit_code, 1);
  EXPECT_NE(config.out.find("bad-config.yaml:2:1: unknown setting \"bogus\""), std::string::npos)
      << config.out;
}

TEST_F(DaemonEndToEnd, MetricsReachTheirPodAndGpu) {
  auto d = start_daemon();
  ASSERT_TRUE(eventually([&] { return !state().is_null(); }));
  ASSERT_EQ(ctl("apply -f " + write("node.yaml", kGpuNode)).exit_code, 0);
  auto r = ctl("push-metrics " + write("dcgm.prom",
                                       "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
                                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"h100-a\","
                                       "namespace=\"team-a\",pod=\"train-0\"} 87\n"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(eventually([&] {
    auto s = state();
    return s.is_object() && s["nodes"].size() == 1 &&
           s["nodes"][0].value("/gpu_metrics/0/DCGM_FI_DEV_GPU_UTIL"_json_pointer, 0.0) == 87.0;
  })) << state().dump();
  EXPECT_EQ(d->stop(), 0);
}

TEST_F(DaemonEndToEnd, WatchEventsPrintsJsonLines) {
  auto d = start_daemon();
  ASSERT_TRUE(eventually([&] { return !state().is_null(); }));
  std::atomic<bool> done{false};
  CommandResult watched;
  std::thread watcher([&] {
    watched = ctl("watch events --count 1 --timeout 15 --json");
    done = true;
  });
  std::string node = write("node.yaml", kGpuNode);
  ASSERT_TRUE(eventually(
      [&] {
        EXPECT_EQ(ctl("apply -f " + node).exit_code, 0);
        return done.load();
      },
      std::chrono::seconds(15)));
  watcher.join();
  EXPECT_EQ(watched.exit_code, 0);
  // Exactly one JSON line and nothing else on stdout.
  ASSERT_EQ(std::count(watched.out.begin(), watched.out.end(), '\n'), 1) << watched.out;
  auto ev = json::parse(watched.out);
  EXPECT_EQ(ev["type"], "io.gpuaas.v1.object.added");
  EXPECT_EQ(ev["object"]["object"]["metadata"]["name"], "h100-a");
  EXPECT_FALSE(ev["id"].get<std::string>().empty());
  // No decisions yet: watch actions ends at its timeout with nothing printed, exit 0.
  auto actions = ctl("watch actions --timeout 0.5 --json");
  EXPECT_EQ(actions.exit_code, 0);
  EXPECT_EQ(actions.out, "");
  EXPECT_EQ(d->stop(), 0);
}

TEST_F(DaemonEndToEnd, JsonLogsAreOneObjectPerLine) {
  auto d = std::make_unique<ChildProcess>(
      std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                               "--admin", "127.0.0.1:0", "--log-format", "json"},
      dir_ + "/json.log");
  ASSERT_TRUE(eventually([&] { return !state().is_null(); }));
  EXPECT_EQ(d->stop(), 0);
  std::istringstream lines(d->log());
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    auto j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_TRUE(j.contains("time") && j.contains("level") && j.contains("msg"));
  }
  EXPECT_GT(n, 2);
}

// The NATS server restarts under a running daemon: it reconnects by itself, nothing stored is
// lost (file storage), and new events are applied.
class DaemonServerRestart : public DaemonEndToEnd {};

TEST_F(DaemonServerRestart, DaemonReconnectsAndKeepsItsModel) {
  auto d = start_daemon();
  ASSERT_TRUE(eventually([&] { return !state().is_null(); })) << d->log();
  ASSERT_EQ(ctl("apply -f " + write("node.yaml", kGpuNode)).exit_code, 0);
  ASSERT_TRUE(eventually([&] {
    auto s = state();
    return s.is_object() && s["nodes"].size() == 1;
  }));
  ASSERT_TRUE(server().restart().is_ok());
  std::string published = shared_dir() + "/manifests/gpu-node/virtual-gpu-node.yaml";
  // The daemon reconnects within its reconnect wait; publishing works once the server is back.
  ASSERT_TRUE(
      eventually([&] { return ctl("apply -f " + published + " 2>/dev/null").exit_code == 0; },
                 std::chrono::seconds(20)));
  json s;
  EXPECT_TRUE(eventually(
      [&] {
        s = state();
        return s.is_object() && s["nodes"].size() == 2;
      },
      std::chrono::seconds(20)))
      << d->log();
  EXPECT_TRUE(d->alive());
  EXPECT_EQ(d->stop(), 0);
}

// Stop the daemon mid-stream (SIGTERM, then SIGKILL) and start it again: every event is applied
// exactly once by the process that holds the model, in stream order.
class DaemonRestart : public DaemonEndToEnd, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    tick_ = "0";  // only the test's events in the stream, so sequences are countable
    DaemonEndToEnd::SetUp();
  }
};

TEST_P(DaemonRestart, EveryEventAppliedExactlyOnce) {
  constexpr int kEvents = 6000;
  auto bus = bus::connect_nats({.url = url()});
  ASSERT_TRUE(bus.is_ok());
  bus::Subjects subjects(root_);
  auto d = start_daemon("first.log");
  ASSERT_TRUE(eventually([&] { return !state().is_null(); })) << d->log();
  // A steady stream of distinct Pods while the daemon is stopped and started.
  std::atomic<int> published{0};
  std::thread publisher([&] {
    for (int i = 0; i < kEvents; ++i) {
      std::string name = "p-" + std::to_string(i);
      auto ev = wire::make_object_event(
          wire::ChangeType::kAdded,
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
              R"(","namespace":"ns"},"spec":{"containers":[]}})",
          "ev-" + std::to_string(i), "test", wire::EventTime(std::chrono::seconds(1000 + i)));
      auto st = (*bus)->publish_stored_async(wire::encode_event(ev, subjects.events("ns", "Pod")),
                                             ev.id());
      if (!st.is_ok()) break;
      if (i % 200 == 199) {
        (void)(*bus)->wait_stored(std::chrono::seconds(10));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      published = i + 1;
    }
    (void)(*bus)->wait_stored(std::chrono::seconds(10));
  });
  ASSERT_TRUE(eventually([&] {
    auto s = state();
    return s.is_object() && s["intake"]["events_applied"] > 500;
  }));
  int code = d->stop(GetParam());
  if (GetParam() == SIGTERM) {
    EXPECT_EQ(code, 0) << d->log();
  }
  auto d2 = start_daemon("second.log");
  publisher.join();
  ASSERT_EQ(published.load(), kEvents);
  json s;
  ASSERT_TRUE(eventually(
      [&] {
        s = state();
        return s.is_object() && s["pods"]["total"] == kEvents;
      },
      std::chrono::seconds(30)))
      << (s.is_object() ? s["intake"].dump() : "no state") << d2->log();
  // The second process applied each stream sequence once: what the first one's snapshot does
  // not cover (a clean stop writes one), part rebuilt from the stream, the rest live, nothing
  // twice.
  uint64_t loaded = 0;
  std::smatch at;
  const std::string log2 = d2->log();
  if (std::regex_search(log2, at,
                        std::regex("state loaded from snapshot [^:]*: stream sequence (\\d+)")))
    loaded = std::stoull(at[1]);
  // After SIGTERM the snapshot covers what was applied; batches fetched ahead of it are
  // replayed. After SIGKILL there is none yet (every 10,000 events): all is replayed.
  if (GetParam() == SIGTERM) {
    EXPECT_GT(loaded, 500u) << log2;
  } else {
    EXPECT_GT(s["intake"]["events_replayed"], 0);
  }
  EXPECT_EQ(s["intake"]["events_applied"], kEvents - loaded);
  EXPECT_EQ(s["intake"]["last_applied_sequence"], kEvents);
  EXPECT_EQ(s["intake"]["duplicates"], 0);
  EXPECT_EQ(s["intake"]["deadlettered"], 0);
  EXPECT_EQ(d2->stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(Signals, DaemonRestart, ::testing::Values(SIGTERM, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(p.param == SIGTERM ? "Term" : "Kill");
                         });

}  // namespace
}  // namespace gpuaas::testing
