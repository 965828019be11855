// gpuaasd against a 3-node JetStream cluster: streams with three replicas, the daemon connected
// to all three URLs, the events stream's leader stopped mid-run and later another node: every
// event is stored once and applied once, and the daemon carries on without a restart.
#include <gtest/gtest.h>

#include <iostream>

#include "failover_support.hpp"
#include "nats_cluster.hpp"

namespace gpuaas::testing {
namespace {

using namespace std::chrono_literals;

TEST(NatsCluster, DaemonLosesNothingWhenNodesStop) {
  constexpr int kEvents = 3000;
  auto cluster = NatsCluster::start(3);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().message();
  NatsCluster& c = **cluster;
  const core::DaemonConfig cfg = failover_config("clu", c.urls(), 3);

  // A publisher connected to all three servers, like the bridge in production.
  bus::NatsOptions po;
  po.url = c.urls();
  po.reconnect_wait = 100ms;
  po.request_timeout = 2s;
  auto pub_bus = bus::connect_nats(po);
  ASSERT_TRUE(pub_bus.is_ok()) << pub_bus.status().message();
  ASSERT_TRUE(ensure_streams(**pub_bus, cfg));  // waits for the meta leader

  auto d = InProcessDaemon::start(cfg);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  InProcessDaemon& daemon = **d;
  PodPublisher publisher(**pub_bus, "clu", kEvents);

  auto applied = [&] { return daemon.daemon().stats().events_applied; };
  // 1. Mid-run, the node that leads the events stream stops.
  ASSERT_TRUE(
      wait_until([&] { return publisher.published() >= kEvents / 4 && applied() > 0; }, 60s))
      << applied();
  std::string leader;
  ASSERT_TRUE(
      wait_until([&] { return !(leader = c.stream_leader(cfg.events_stream.name)).empty(); }, 10s));
  const int first = c.index_of(leader);
  ASSERT_GE(first, 0) << leader;
  const auto stopped_at = applied();
  c.node(first).stop();
  std::cout << "[ cluster ] stopped " << leader << " (events stream leader) after " << stopped_at
            << " events applied\n";

  // 2. The remaining two elect a new leader; publishing and intake go on.
  ASSERT_TRUE(wait_until([&] { return applied() >= stopped_at + kEvents / 6; }, 60s))
      << "the daemon did not carry on: " << applied() << " applied";
  std::string next_leader = c.stream_leader(cfg.events_stream.name);
  std::cout << "[ cluster ] new leader: " << next_leader << "\n";
  EXPECT_NE(next_leader, leader);

  // 3. The node comes back (same store) and catches up; then another node stops.
  ASSERT_TRUE(c.node(first).restart().is_ok());
  const int second = (first + 1) % c.size();
  ASSERT_TRUE(wait_until([&] { return publisher.published() >= 3 * kEvents / 4; }, 60s));
  c.node(second).stop();
  std::cout << "[ cluster ] stopped " << NatsCluster::name(second) << " after " << applied()
            << " events applied\n";

  publisher.join();
  ASSERT_EQ(publisher.published(), kEvents) << publisher.error();
  std::cout << "[ cluster ] publisher retried " << publisher.retries() << " times\n";
  const core::IntakeStats st = daemon.daemon().stats();
  std::cout << "[ cluster ] intake: " << st.redeliveries_skipped << " redeliveries skipped, "
            << st.gaps_deferred << " gaps left for redelivery\n";
  expect_each_event_applied_once(daemon, cfg, kEvents);
}

}  // namespace
}  // namespace gpuaas::testing
