// High availability, end to end: two gpuaasd on one subject root lead in turn through a lease in a
// KV bucket with a TTL. The test first holds the lease itself, so both daemons stand by (and
// answer read-only requests); when it lets go, one takes over within the TTL; when that one is
// killed with SIGKILL, the other takes over. Actions carry the leader's epoch, which grows from
// one leader to the next, and no action reaches the actions stream twice. A leader whose lease is
// taken from it stands by in the same process, its model current, and leads again when it wins
// the lease back.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon_e2e.hpp"
#include "failover_support.hpp"
#include "gpuaas/bus/key_value.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::testing {
namespace {

constexpr auto kTtl = std::chrono::seconds(2);

std::string job(const std::string& name, int gpus) {
  return json{{"apiVersion", "kubeflow.org/v1"},
              {"kind", "PyTorchJob"},
              {"metadata",
               {{"name", name},
                {"namespace", "team-a"},
                {"resourceVersion", "1"},
                {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
              {"spec",
               {{"runPolicy", {{"suspend", true}}},
                {"pytorchReplicaSpecs",
                 {{"Master",
                   {{"replicas", 1},
                    {"template",
                     {{"spec",
                       {{"containers", json::array({{{"name", "pytorch"},
                                                     {"image", "example/train:1"},
                                                     {"resources",
                                                      {{"limits",
                                                        {{"nvidia.com/gpu", std::to_string(gpus)},
                                                         {"cpu", "4"},
                                                         {"memory", "16Gi"}}}}}}})}}}}}}}}}}}}
      .dump();
}

class HaFailover : public NatsServerTest {
 protected:
  void SetUp() override {
    // A subject root (streams, lease bucket) per test, so one test's leader is not the next's.
    static int tests = 0;
    root_ = "hafail" + std::to_string(++tests);
    upper_ = root_;
    for (auto& c : upper_) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    dir_ = temp_dir(root_);
    auto b = bus::connect_nats({.url = url()});
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    bus_ = std::move(b).value();
    auto cfg = core::default_config(root_);
    for (const auto* s : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream})
      ASSERT_TRUE(bus_->ensure_stream(*s).is_ok());
    // The daemons' lease bucket, as they open it.
    auto kv = bus_->open_kv({.bucket = upper_ + "_LEADER", .ttl = kTtl});
    ASSERT_TRUE(kv.is_ok()) << kv.status().message();
    kv_ = std::move(kv).value();
    std::ofstream(dir_ + "/policy.yaml") << kH100QueuePolicy;
    std::ofstream(dir_ + "/gpuaasd.yaml")
        << "subjectRoot: " << root_
        << "\ntickInterval: 0s\npolicyWatchInterval: 0s\npolicyFromStream: true\n"
           "highAvailability: {enabled: true, leaseTTL: 2s}\n";
  }

  std::unique_ptr<ChildProcess> start(const std::string& name) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", dir_ + "/gpuaasd.yaml",
                                 "--server", url(), "--admin", "", "--plugins",
                                 bin_dir() + "/../plugins"},
        dir_ + "/" + name + ".log");
  }
  void publish(const std::string& ns, const std::string& kind, wire::ChangeType change,
               const std::string& object) {
    bus::Subjects subjects(root_);
    int n = next_event_++;
    auto ev = wire::make_object_event(change, object, "ev-" + std::to_string(n), "ha-test",
                                      wire::EventTime(std::chrono::seconds(1'767'225'600 + n)));
    auto ack = bus_->publish_stored(wire::encode_event(ev, subjects.events(ns, kind)), ev.id());
    ASSERT_TRUE(ack.is_ok()) << ack.status().message();
  }
  // The policy, one H100 node with 4 GPUs, and job "one" asking for 2: events 1 to 3.
  void publish_scene() {
    auto policy = core::policy_set_object({dir_ + "/policy.yaml"});
    ASSERT_TRUE(policy.is_ok()) << policy.status().message();
    publish("", core::kPolicySetKind, wire::ChangeType::kAdded, *policy);
    publish(
        "", "Node", wire::ChangeType::kAdded,
        R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"h100-a","resourceVersion":"1",)"
        R"("labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"}},"status":{"capacity":)"
        R"({"cpu":"96","memory":"1Ti","nvidia.com/gpu":"4"},"allocatable":{"cpu":"94",)"
        R"("memory":"1000Gi","nvidia.com/gpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}})");
    publish("team-a", "PyTorchJob", wire::ChangeType::kAdded, job("one", 2));
  }
  json state() {
    bus::Message m;
    m.subject = bus::Subjects(root_).api("state");
    auto r = bus_->request(m, std::chrono::seconds(2));
    return r.is_ok() ? json::parse(r->data, nullptr, false) : json();
  }
  // Every action stored so far: decision id -> epoch; repeats counted.
  std::map<std::string, uint64_t> actions(const std::string& target, int* repeats) {
    return stored_actions(*bus_, upper_ + "_ACTIONS", target, repeats);
  }
  bool admitted(const std::string& name) {
    int repeats = 0;
    return !actions(name, &repeats).empty();
  }

  std::string root_, upper_, dir_;
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::KeyValue> kv_;
  int next_event_ = 0;
};

TEST_F(HaFailover, StandbyTakesOverWithinTheTtlWithAHigherEpoch) {
  // The test holds the lease first, renewing it, so both daemons stand by.
  auto first = kv_->create("leader", "the-test");
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  std::atomic<bool> renewing{true};
  std::thread renewer([&, rev = *first]() mutable {
    while (renewing) {
      auto r = kv_->update("leader", "the-test", rev);
      if (r.is_ok()) rev = *r;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  publish_scene();
  if (HasFatalFailure()) return;

  auto a = start("a");
  auto b = start("b");
  // Standbys follow the stream and answer read-only requests.
  json s;
  ASSERT_TRUE(eventually(
      [&] {
        s = state();
        return s.is_object() && s["intake"]["last_applied_sequence"] == 3;
      },
      std::chrono::seconds(20)))
      << a->log() << b->log();
  EXPECT_FALSE(admitted("one")) << "a standby acted";

  // The test lets go: one daemon takes over within the TTL (plus its renew period) and admits.
  renewing = false;
  renewer.join();
  auto let_go = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return admitted("one"); }, kTtl * 5)) << a->log() << b->log();
  double first_takeover =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - let_go).count();
  bool a_leads = a->log().find("took over") != std::string::npos;
  ASSERT_NE(a_leads, b->log().find("took over") != std::string::npos) << "exactly one leads";
  auto& leader = a_leads ? a : b;
  auto& standby = a_leads ? b : a;

  // The leader dies; the standby takes over and admits what the first one did not get to.
  publish("team-a", "PyTorchJob", wire::ChangeType::kAdded, job("two", 2));
  ASSERT_TRUE(eventually([&] { return admitted("two"); }, std::chrono::seconds(10)));
  leader->signal(SIGKILL);
  EXPECT_EQ(leader->stop(SIGKILL), -1);
  auto killed = std::chrono::steady_clock::now();
  publish("team-a", "PyTorchJob", wire::ChangeType::kAdded, job("three", 2));
  publish("team-a", "PyTorchJob", wire::ChangeType::kDeleted, job("one", 2));
  ASSERT_TRUE(eventually([&] { return admitted("three"); }, kTtl * 5)) << standby->log();
  double second_takeover =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_NE(standby->log().find("took over"), std::string::npos) << standby->log();

  int repeats = 0;
  auto all = actions("", &repeats);
  EXPECT_EQ(repeats, 0) << "an action reached the actions stream twice";
  uint64_t e1 = all.begin()->second;
  std::set<uint64_t> epochs;
  for (const auto& [id, epoch] : all) epochs.insert(epoch);
  EXPECT_EQ(epochs.size(), 2u) << "one epoch per leader";
  EXPECT_GT(e1, 0u);
  int three_repeats = 0;
  auto three = actions("three", &three_repeats);
  ASSERT_FALSE(three.empty());
  EXPECT_GT(three.begin()->second, *epochs.begin()) << "the new leader's epoch is higher";
  RecordProperty("first_takeover_seconds", std::to_string(first_takeover));
  RecordProperty("second_takeover_seconds", std::to_string(second_takeover));
  std::cout << "takeover after the lease was let go: " << first_takeover
            << " s; after the leader was killed: " << second_takeover << " s (TTL " << kTtl.count()
            << " s)\n";
  EXPECT_EQ(standby->stop(), 0) << standby->log();
}

TEST_F(HaFailover, ALeaderThatLosesTheLeaseStandsByAndLeadsAgain) {
  publish_scene();
  if (HasFatalFailure()) return;
  auto a = start("a");
  ASSERT_TRUE(eventually([&] { return admitted("one"); }, kTtl * 5)) << a->log();

  // The key changes hands behind the leader's back (as when its renewals could not reach the
  // servers for a TTL and a standby took over): its next renewal fails, and it stands by.
  std::atomic<bool> renewing{true};
  std::atomic<uint64_t> taken_at{0};
  std::jthread holder([&] {
    uint64_t rev = 0;
    while (renewing) {
      auto cur = kv_->get("leader");
      if (cur.is_ok() && cur->has_value()) {
        auto r = kv_->update("leader", "the-test", rev != 0 ? rev : (*cur)->revision);
        if (r.is_ok()) {
          rev = *r;
          if (taken_at == 0) taken_at = rev;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  struct LetGo {
    std::atomic<bool>& flag;
    ~LetGo() { flag = false; }  // before the jthread joins, whatever fails
  } let_go{renewing};
  ASSERT_TRUE(
      eventually([&] { return a->log().find("lost the lease") != std::string::npos; }, kTtl * 5))
      << a->log();
  // A standby acts on nothing, but follows the stream.
  publish("team-a", "PyTorchJob", wire::ChangeType::kAdded, job("two", 2));
  ASSERT_TRUE(eventually(
      [&] {
        json s = state();
        return s.is_object() && s["intake"]["last_applied_sequence"] == 4;
      },
      std::chrono::seconds(10)))
      << a->log();
  EXPECT_FALSE(admitted("two")) << "a daemon that lost the lease acted";
  EXPECT_TRUE(a->alive()) << a->log();

  // The test lets go: the same process wins the lease back with a higher epoch and admits.
  renewing = false;
  holder.join();
  ASSERT_NE(taken_at.load(), 0u);
  ASSERT_TRUE(eventually([&] { return admitted("two"); }, kTtl * 5)) << a->log();
  int repeats = 0;
  auto all = actions("", &repeats);
  EXPECT_EQ(repeats, 0) << "an action reached the actions stream twice";
  auto one = actions("one", &repeats);
  auto two = actions("two", &repeats);
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(two.empty());
  EXPECT_GT(two.begin()->second, taken_at.load()) << "led again with an epoch above the test's";
  EXPECT_GT(two.begin()->second, one.begin()->second);
  EXPECT_EQ(a->stop(), 0) << a->log();
}

}  // namespace
}  // namespace gpuaas::testing
