// An in-process gpuaasd (core::Daemon over a real NATS connection) and a publisher of distinct
// Pods that retries through server outages, for the failover tests: what matters there is that
// every event is stored once and applied once, whatever the servers do meanwhile.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/v1/action.pb.h"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::testing {

using Clock = std::chrono::steady_clock;

// The daemon's settings for a failover test: only the test's events in the stream (no ticks), a
// short ack wait so a batch whose ack was lost in a failover comes back quickly, fast reconnects.
// prefetch_batches: gpuaasd's default (2) unless a test asks otherwise.
inline core::DaemonConfig failover_config(const std::string& root, const std::string& urls,
                                          int replicas, int prefetch_batches = 2) {
  core::DaemonConfig cfg = core::default_config(root);
  cfg.tick_interval = std::chrono::milliseconds(0);
  cfg.admin_listen = "";
  cfg.policy_watch_interval = std::chrono::milliseconds(0);
  cfg.nats.url = urls;
  cfg.nats.reconnect_wait = std::chrono::milliseconds(100);
  cfg.nats.request_timeout = std::chrono::milliseconds(2000);
  cfg.intake.ack_wait = std::chrono::seconds(5);
  cfg.intake.fetch_batch = 100;
  cfg.intake.prefetch_batches = prefetch_batches;
  for (auto* s : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream}) {
    s->replicas = replicas;
  }
  return cfg;
}

// Retries `f` (returning a Status) until it succeeds or `bound` passes; the last status.
template <typename F>
Status retry_for(std::chrono::milliseconds bound, F f) {
  Status st = Status::unavailable("not tried");
  for (auto deadline = Clock::now() + bound; Clock::now() < deadline;) {
    st = f();
    if (st) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return st;
}

// The daemon's streams, created ahead of it: on a new cluster the first JetStream requests fail
// until a meta leader is elected, and start() does not wait for that.
inline Status ensure_streams(bus::Bus& b, const core::DaemonConfig& cfg) {
  for (const auto* s : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream}) {
    if (auto st = retry_for(std::chrono::seconds(30), [&] { return b.ensure_stream(*s); }); !st) {
      return st;
    }
  }
  return Status::ok();
}

// core::Daemon running its intake on a thread of its own.
class InProcessDaemon {
 public:
  static Result<std::unique_ptr<InProcessDaemon>> start(core::DaemonConfig cfg) {
    std::unique_ptr<InProcessDaemon> d(new InProcessDaemon());
    auto b = bus::connect_nats(cfg.nats);
    if (!b) return b.status();
    d->bus_ = std::move(b).value();
    d->daemon_ = std::make_unique<core::Daemon>(std::move(cfg), *d->bus_, nullptr);
    if (auto st = d->daemon_->start(); !st) return st;
    d->thread_ = std::thread([p = d.get()] { p->result_ = p->daemon_->run(); });
    return d;
  }
  ~InProcessDaemon() {
    if (daemon_) daemon_->stop();
    if (thread_.joinable()) thread_.join();
  }
  core::Daemon& daemon() { return *daemon_; }
  bus::Bus& bus() { return *bus_; }
  std::size_t pods() const {
    return daemon_->read([](const core::ClusterModel& m) { return m.pods().size(); });
  }

 private:
  InProcessDaemon() = default;
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<core::Daemon> daemon_;
  std::thread thread_;
  Status result_;
};

// Publishes Pods p-0 .. p-(n-1) in order, each with its event id as msg id, retrying each for
// up to 60 s: a retry of a message the server stored but whose ack was lost is deduplicated by
// JetStream, so each Pod is stored once.
class PodPublisher {
 public:
  PodPublisher(bus::Bus& b, const std::string& root, int n) : bus_(b), subjects_(root) {
    thread_ = std::thread([this, n] {
      for (int i = 0; i < n; ++i) {
        std::string name = "p-" + std::to_string(i);
        auto ev = wire::make_object_event(
            wire::ChangeType::kAdded,
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                R"(","namespace":"ns"},"spec":{"containers":[]}})",
            "ev-" + std::to_string(i), "test", wire::EventTime(std::chrono::seconds(1000 + i)));
        auto msg = wire::encode_event(ev, subjects_.events("ns", "Pod"));
        Status st = retry_for(std::chrono::seconds(60), [&] {
          auto ack = bus_.publish_stored(msg, ev.id());
          if (!ack) ++retries_;
          return ack.status();
        });
        if (!st) {
          error_ = "event " + std::to_string(i) + ": " + st.message();
          break;
        }
        published_ = i + 1;
      }
    });
  }
  ~PodPublisher() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  int published() const { return published_.load(); }
  int retries() const { return retries_.load(); }
  const std::string& error() const { return error_; }  // after join()

 private:
  bus::Bus& bus_;
  bus::Subjects subjects_;
  std::atomic<int> published_{0};
  std::atomic<int> retries_{0};
  std::string error_;
  std::thread thread_;
};

// Polls `done` every 20 ms for at most `bound`.
template <typename Pred>
bool wait_until(Pred done, std::chrono::milliseconds bound) {
  for (auto deadline = Clock::now() + bound; Clock::now() < deadline;) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Every Pod stored once and applied once, in stream order, by one daemon that never restarted.
inline void expect_each_event_applied_once(InProcessDaemon& d, const core::DaemonConfig& cfg,
                                           int n) {
  ASSERT_TRUE(wait_until([&] { return d.daemon().stats().events_applied >= std::size_t(n); },
                         std::chrono::seconds(90)))
      << "applied " << d.daemon().stats().events_applied << " of " << n;
  // Give a late redelivery the chance to show up as a duplicate before counting.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  core::IntakeStats s = d.daemon().stats();
  EXPECT_EQ(s.events_applied, uint64_t(n));
  EXPECT_EQ(s.last_applied_sequence, uint64_t(n));
  EXPECT_EQ(s.deadlettered, 0u);
  EXPECT_EQ(d.pods(), std::size_t(n));
  auto pos = retry_for(std::chrono::seconds(20), [&] {
    return d.bus()
        .consumer_position({.stream = cfg.events_stream.name, .durable = cfg.intake.durable})
        .status();
  });
  ASSERT_TRUE(pos) << pos.message();
  auto p =
      d.bus().consumer_position({.stream = cfg.events_stream.name, .durable = cfg.intake.durable});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->stream_last, uint64_t(n)) << "a retried publish was stored twice";
}

// Every action in `stream` (of `target` when given, by name): decision id -> epoch; a decision
// id seen again is counted in `repeats`.
inline std::map<std::string, uint64_t> stored_actions(bus::Bus& b, const std::string& stream,
                                                      const std::string& target, int* repeats) {
  std::map<std::string, uint64_t> out;
  auto reader = b.open_reader(stream, 1);
  EXPECT_TRUE(reader.is_ok()) << reader.status().message();
  if (!reader.is_ok()) return out;
  for (;;) {
    auto batch = (*reader)->fetch(1000, std::chrono::milliseconds(500));
    if (!batch.is_ok() || (*batch)->size() == 0) break;
    for (std::size_t i = 0; i < (*batch)->size(); ++i) {
      v1::Action a;
      std::string_view d = (*batch)->data(i);
      EXPECT_TRUE(a.ParseFromArray(d.data(), static_cast<int>(d.size())));
      if (!target.empty() && a.target().name() != target) continue;
      if (!out.emplace(a.decision_id(), a.epoch()).second) ++*repeats;
    }
  }
  return out;
}

}  // namespace gpuaas::testing
