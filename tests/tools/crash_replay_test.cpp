// Crash safety, end to end: one event history (jobs of two teams arriving, changing and leaving
// under quotas that lend and borrow in a cohort, with ticks) is stored twice, under two subject
// roots. One gpuaasd reads the first without interruption. Another reads the second while it is
// killed with SIGKILL at random points and started again each time. Both must end in the same
// state, with the same set of actions, and the actions stream must hold no action twice.
// GPUAAS_CRASH_EVENTS and GPUAAS_CRASH_KILLS change the size (100,000 events, 20 kills).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/event_time.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Two teams share H100 and A100 GPUs through a cohort, in priority order. No preemption: nothing
// plays the operator here, so a preempted job would never be seen to stop.
constexpr const char* kPolicy = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a100}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: research
  namespaceSelector: {}
  preemption: {withinClusterQueue: Never, reclaimWithinCohort: Never}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: memory, nominalQuota: 1000Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 500Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohort: research
  namespaceSelector: {}
  preemption: {withinClusterQueue: Never, reclaimWithinCohort: Never}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: memory, nominalQuota: 1000Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 500Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-b}
spec: {clusterQueue: team-b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec:
  expectedDuration: {default: 30m}
)";

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoll(v) > 0 ? static_cast<std::size_t>(std::atoll(v)) : fallback;
}

std::string node_json(const std::string& name, const std::string& product) {
  return json{{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata",
               {{"name", name},
                {"resourceVersion", "1"},
                {"labels", {{"nvidia.com/gpu.product", product}}}}},
              {"status",
               {{"capacity", {{"cpu", "96"}, {"memory", "1Ti"}, {"nvidia.com/gpu", "4"}}},
                {"allocatable", {{"cpu", "94"}, {"memory", "1000Gi"}, {"nvidia.com/gpu", "4"}}},
                {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}}
      .dump();
}

struct Job {
  std::string ns, name, priority;
  int gpus = 1;
  int rv = 1;
};

std::string job_json(const Job& j) {
  json container = {
      {"name", "pytorch"},
      {"image", "example/train:1"},
      {"resources",
       {{"limits",
         {{"nvidia.com/gpu", std::to_string(j.gpus)}, {"cpu", "4"}, {"memory", "16Gi"}}}}}};
  return json{
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata",
       {{"name", j.name},
        {"namespace", j.ns},
        {"resourceVersion", std::to_string(j.rv)},
        {"labels",
         {{"kueue.x-k8s.io/queue-name", "main"}, {"kueue.x-k8s.io/priority-class", j.priority}}}}},
      {"spec",
       {{"runPolicy", {{"suspend", true}}},
        {"pytorchReplicaSpecs",
         {{"Master",
           {{"replicas", 1},
            {"template", {{"spec", {{"containers", json::array({container})}}}}}}}}}}}}
      .dump();
}

// The history: a PolicySet, four GPU nodes, then every 10 s of event time a tick and, at random
// (fixed seed), jobs arriving, being relabelled and leaving. Exactly `n` events.
class History {
 public:
  History(std::size_t n, const std::string& policy_file) {
    auto policy = core::policy_set_object({policy_file});
    EXPECT_TRUE(policy.is_ok()) << policy.status().message();
    add("", core::kPolicySetKind, wire::ChangeType::kAdded, policy.is_ok() ? *policy : "");
    for (int i = 0; i < 2; ++i) {
      add("", "Node", wire::ChangeType::kAdded,
          node_json("h100-" + std::to_string(i), "NVIDIA-H100-80GB-HBM3"));
      add("", "Node", wire::ChangeType::kAdded,
          node_json("a100-" + std::to_string(i), "NVIDIA-A100-SXM4-80GB"));
    }
    std::mt19937_64 rng(20261130);
    std::map<int64_t, std::vector<std::string>> leaving;  // step -> job names
    std::map<std::string, Job> live;
    int next_job = 0;
    for (int64_t step = 0; events_.size() < n; ++step) {
      now_ = wire::EventTime(seconds(1'767'225'600 + step * 10));
      tick(step);
      if (events_.size() < n && rng() % 2 == 0) {
        Job j{rng() % 2 == 0 ? "team-a" : "team-b", "job-" + std::to_string(next_job++),
              rng() % 4 == 0 ? "high" : "low", 1 << (rng() % 3)};
        add(j.ns, "PyTorchJob", wire::ChangeType::kAdded, job_json(j));
        leaving[step + 30 + static_cast<int64_t>(rng() % 360)].push_back(j.name);
        live.emplace(j.name, std::move(j));
      }
      if (events_.size() < n && !live.empty() && rng() % 5 == 0) {
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        ++it->second.rv;
        add(it->second.ns, "PyTorchJob", wire::ChangeType::kModified, job_json(it->second));
      }
      if (auto due = leaving.find(step); due != leaving.end()) {
        for (const auto& name : due->second) {
          if (events_.size() >= n) break;
          auto it = live.find(name);
          ++it->second.rv;
          add(it->second.ns, "PyTorchJob", wire::ChangeType::kDeleted, job_json(it->second));
          live.erase(it);
        }
        leaving.erase(due);
      }
    }
  }

  // Stores the history under `root`, in order, each event with its id as Nats-Msg-Id.
  void publish(bus::Bus& bus, const std::string& root) const {
    bus::Subjects subjects(root);
    auto cfg = core::default_config(root);
    for (const auto* s : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream})
      ASSERT_TRUE(bus.ensure_stream(*s).is_ok());
    for (std::size_t i = 0; i < events_.size(); ++i) {
      const auto& e = events_[i];
      std::string subject = e.kind.empty() ? subjects.ticks() : subjects.events(e.ns, e.kind);
      ASSERT_TRUE(
          bus.publish_stored_async(wire::encode_event(e.event, subject), e.event.id()).is_ok());
      if (i % 2000 == 1999) {
        ASSERT_TRUE(bus.wait_stored(seconds(30)).is_ok());
      }
    }
    ASSERT_TRUE(bus.wait_stored(seconds(30)).is_ok());
  }
  std::size_t size() const { return events_.size(); }

 private:
  struct Stored {
    std::string ns, kind;  // kind "" for a tick
    v1::Event event;
  };
  void add(const std::string& ns, const std::string& kind, wire::ChangeType change,
           std::string object) {
    std::string id = "ev-" + std::to_string(events_.size());
    events_.push_back(
        {ns, kind, wire::make_object_event(change, std::move(object), id, "crash-test", now_)});
  }
  void tick(int64_t step) {
    v1::Event ev = wire::make_event("ev-" + std::to_string(events_.size()), "crash-test", now_);
    ev.mutable_queue()->mutable_tick()->set_sequence(static_cast<uint64_t>(step + 1));
    ev.set_type(std::string(wire::kTypeTick));
    events_.push_back({"", "", std::move(ev)});
  }

  wire::EventTime now_ = wire::EventTime(seconds(1'767'225'600));
  std::vector<Stored> events_;
};

// Snapshots every this many events (at the end of a 512-event batch): a restart replays at most
// this many, the rest of the batch, and what the work consumer had handed out ahead of the daemon
// (prefetched batches and those nats.c already holds; seen up to 4 batches).
constexpr std::size_t kSnapshotEvery = 5000;
constexpr std::size_t kUnacked = 512 * 8;

class CrashReplay : public NatsServerTest {
 protected:
  void SetUp() override {
    dir_ = temp_dir("crash-replay");
    policy_file_ = dir_ + "/policy.yaml";
    std::ofstream(policy_file_) << kPolicy;
    auto b = bus::connect_nats({.url = url()});
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    bus_ = std::move(b).value();
  }

  std::unique_ptr<ChildProcess> start(const std::string& root, const std::string& log) {
    std::string config = dir_ + "/" + root + ".yaml";
    std::ofstream(config) << "subjectRoot: " << root
                          << "\ntickInterval: 0s\npolicyWatchInterval: 0s\npolicyFromStream: true\n"
                          << "snapshots: {everyEvents: " << kSnapshotEvery << "}\n";
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config, "--server", url(),
                                 "--admin", "", "--plugins", bin_dir() + "/../plugins"},
        dir_ + "/" + log);
  }
  json ask(const std::string& root, const std::string& endpoint, const std::string& body = "") {
    bus::Message m;
    m.subject = bus::Subjects(root).api(endpoint);
    m.data = body;
    auto r = bus_->request(m, seconds(10));
    return r.is_ok() ? json::parse(r->data, nullptr, false) : json();
  }
  uint64_t applied(const std::string& root) {
    auto s = ask(root, "state");
    return s.is_object() ? s["intake"]["last_applied_sequence"].get<uint64_t>() : 0;
  }
  // Waits (bounded) until the daemon has applied through `seq`.
  bool reaches(const std::string& root, uint64_t seq, milliseconds bound) {
    return eventually([&] { return applied(root) >= seq; }, bound);
  }
  // Every action in the root's actions stream: decision id -> subject (root removed) and body.
  std::map<std::string, std::string> actions(const std::string& root, int* repeats) {
    std::map<std::string, std::string> out;
    auto cfg = core::default_config(root);
    auto reader = bus_->open_reader(cfg.actions_stream.name, 1);
    EXPECT_TRUE(reader.is_ok());
    if (!reader.is_ok()) return out;
    for (;;) {
      auto batch = (*reader)->fetch(1000, seconds(2));
      if (!batch.is_ok() || (*batch)->size() == 0) break;
      for (std::size_t i = 0; i < (*batch)->size(); ++i) {
        v1::Action a;
        std::string_view d = (*batch)->data(i);
        EXPECT_TRUE(a.ParseFromArray(d.data(), static_cast<int>(d.size())));
        std::string subject(std::string((*batch)->subject(i)).substr(root.size()));
        a.clear_epoch();
        if (!out.emplace(a.decision_id(), subject + " " + wire::action_to_json(a)).second)
          ++*repeats;
      }
    }
    return out;
  }
  // The state without what belongs to one process (its intake counters).
  json comparable_state(const std::string& root) {
    auto s = ask(root, "state");
    if (s.is_object()) s.erase("intake");
    return s;
  }

  std::string dir_, policy_file_;
  std::unique_ptr<bus::Bus> bus_;
};

TEST_F(CrashReplay, SigkillAtRandomPointsEndsLikeAnUninterruptedRun) {
  const std::size_t n = env_size("GPUAAS_CRASH_EVENTS", 100'000);
  const std::size_t kills = env_size("GPUAAS_CRASH_KILLS", 20);
  History history(n, policy_file_);
  ASSERT_EQ(history.size(), n);
  history.publish(*bus_, "calm");
  history.publish(*bus_, "crash");

  // The reference: one process from start to end.
  auto calm = start("calm", "calm.log");
  ASSERT_TRUE(reaches("calm", n, seconds(300))) << calm->log();
  json calm_state = comparable_state("calm");
  json calm_report = ask("calm", "report");
  EXPECT_EQ(calm->stop(), 0) << calm->log();

  // The same history, killed at `kills` random points.
  std::mt19937_64 rng(7);
  std::set<uint64_t> points;
  while (points.size() < kills) points.insert(1 + rng() % (n - 1));
  int restarts = 0;
  uint64_t killed_at = 0, replayed_total = 0;
  // Each start loads the last snapshot and replays only what came after it.
  auto check_replay = [&](const std::string& log) {
    json intake = ask("crash", "state")["intake"];
    ASSERT_TRUE(intake.is_object()) << log;
    const auto replayed = intake["events_replayed"].get<uint64_t>();
    replayed_total += replayed;
    if (killed_at >= kSnapshotEvery) {
      EXPECT_GT(intake["snapshot_sequence"].get<uint64_t>(), 0u) << log;
      EXPECT_LE(replayed, kSnapshotEvery + kUnacked) << log;
    }
    EXPECT_EQ(intake["snapshots_refused"].get<uint64_t>(), 0u) << log;
  };
  for (uint64_t point : points) {
    auto d = start("crash", "crash-" + std::to_string(restarts++) + ".log");
    ASSERT_TRUE(eventually([&] { return ask("crash", "state").is_object(); }, seconds(300)))
        << d->log();
    check_replay(d->log());
    ASSERT_TRUE(reaches("crash", point, seconds(300))) << d->log();
    d->signal(SIGKILL);
    EXPECT_EQ(d->stop(SIGKILL), -1);
    killed_at = point;
  }
  auto last = start("crash", "crash-last.log");
  ASSERT_TRUE(eventually([&] { return ask("crash", "state").is_object(); }, seconds(300)))
      << last->log();
  check_replay(last->log());
  std::cout << "crash test: " << n << " events, " << kills << " kills, " << replayed_total
            << " events replayed at restarts in all (snapshots every " << kSnapshotEvery << ")\n";
  ASSERT_TRUE(reaches("crash", n, seconds(300))) << last->log();
  json crash_state = comparable_state("crash");
  json crash_report = ask("crash", "report");
  EXPECT_EQ(last->stop(), 0) << last->log();

  ASSERT_TRUE(calm_state.is_object());
  EXPECT_EQ(crash_state, calm_state);
  EXPECT_EQ(crash_report, calm_report);
  int calm_repeats = 0, crash_repeats = 0;
  auto calm_actions = actions("calm", &calm_repeats);
  auto crash_actions = actions("crash", &crash_repeats);
  EXPECT_GT(calm_actions.size(), 100u) << "the history should make the daemon act";
  EXPECT_EQ(calm_repeats, 0);
  EXPECT_EQ(crash_repeats, 0) << "an action reached the actions stream twice";
  EXPECT_EQ(crash_actions.size(), calm_actions.size());
  EXPECT_TRUE(crash_actions == calm_actions);
  for (const auto& [id, body] : calm_actions) {
    auto it = crash_actions.find(id);
    if (it == crash_actions.end()) {
      ADD_FAILURE() << "missing after crashes: " << id << " " << body;
      break;
    }
    if (it->second != body) {
      ADD_FAILURE() << "differs: " << body << "\nvs " << it->second;
      break;
    }
  }
}

}  // namespace
}  // namespace gpuaas::testing
