// A fetch lost in a server failover is delivered again only after ackWait, after later events.
// On a real nats-server, a second subscriber of the daemon's work consumer takes some events and
// never acks them: the daemon must read those from the stream before it applies the next ones,
// never skip them as already applied.
#include <gtest/gtest.h>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core {
namespace {

class DaemonGap : public testing::NatsServerTest {};

TEST_F(DaemonGap, EventsThatArriveAfterLaterOnesAreReadFromTheStreamInOrder) {
  auto b = bus::connect_nats({.url = url()});
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  DaemonConfig cfg = default_config("gap");
  cfg.tick_interval = std::chrono::milliseconds(0);
  cfg.intake.fetch_batch = 5;
  cfg.intake.prefetch_batches = 0;
  Daemon d(cfg, **b, nullptr);
  ASSERT_TRUE(d.start().is_ok());
  bus::Subjects s("gap");
  for (int i = 0; i < 20; ++i) {
    std::string name = "n" + std::to_string(i);
    auto ev = wire::make_object_event(
        wire::ChangeType::kAdded,
        R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"("}})", "ev-" + name,
        "test", wire::EventTime(std::chrono::seconds(100 + i)));
    ASSERT_TRUE(
        (*b)->publish_stored(wire::encode_event(ev, s.events("", "Node")), ev.id()).is_ok());
  }
  auto first = d.step(std::chrono::seconds(2));
  ASSERT_TRUE(first.is_ok());
  EXPECT_EQ(d.stats().last_applied_sequence, 5u);
  // Another subscriber of the same durable consumer takes the next five and drops them.
  bus::ConsumerSettings thief;
  thief.stream = cfg.events_stream.name;
  thief.durable = cfg.intake.durable;
  thief.prefetch_batches = 0;
  auto other = (*b)->open_consumer(thief);
  ASSERT_TRUE(other.is_ok()) << other.status().message();
  auto taken = (*other)->fetch(5, std::chrono::seconds(2));
  ASSERT_TRUE(taken.is_ok());
  ASSERT_EQ((*taken)->size(), 5u);
  EXPECT_EQ((*taken)->stream_sequence(0), 6u);
  for (int i = 0; i < 20 && d.stats().last_applied_sequence < 20; ++i)
    ASSERT_TRUE(d.step(std::chrono::milliseconds(500)).is_ok());
  EXPECT_EQ(d.stats().events_applied, 20u);
  EXPECT_EQ(d.stats().last_applied_sequence, 20u);
  d.read([](const ClusterModel& m) { EXPECT_EQ(m.nodes().size(), 20u); });
}

}  // namespace
}  // namespace gpuaas::core
