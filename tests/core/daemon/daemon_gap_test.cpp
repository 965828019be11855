// A fetch lost in a server failover is delivered again only after ackWait, after later events.
// On a real nats-server, a second subscriber of the daemon's work consumer takes some events and
// never acks them: the daemon must read those from the stream before it applies the next ones,
// never skip them as already applied. When the stream cannot be read just then (its leader being
// elected), the later events wait: acknowledging them would acknowledge the missing ones too.
#include <gtest/gtest.h>

#include <atomic>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core {
namespace {

class DaemonGap : public testing::NatsServerTest {};

// The real NATS bus whose stream readers can be refused, as while a stream elects its leader.
class ReadersDownBus final : public bus::Bus {
 public:
  explicit ReadersDownBus(bus::Bus& b) : b_(b) {}
  std::atomic<bool> readers_down{false};

  Status publish(const bus::Message& m) override { return b_.publish(m); }
  Result<bus::PublishAck> publish_stored(const bus::Message& m, const std::string& id) override {
    return b_.publish_stored(m, id);
  }
  Status publish_stored_async(const bus::Message& m, const std::string& id) override {
    return b_.publish_stored_async(m, id);
  }
  Status wait_stored(std::chrono::milliseconds t) override { return b_.wait_stored(t); }
  Result<std::unique_ptr<bus::Subscription>> subscribe(const std::string& s,
                                                       bus::MessageHandler h) override {
    return b_.subscribe(s, std::move(h));
  }
  Result<std::unique_ptr<bus::Subscription>> serve(const std::string& s, const std::string& q,
                                                   bus::RequestHandler h) override {
    return b_.serve(s, q, std::move(h));
  }
  Result<bus::Message> request(const bus::Message& m, std::chrono::milliseconds t) override {
    return b_.request(m, t);
  }
  Status ensure_stream(const bus::StreamSettings& s) override { return b_.ensure_stream(s); }
  Status ensure_consumer(const bus::ConsumerSettings& s) override { return b_.ensure_consumer(s); }
  Status delete_stream(const std::string& n) override { return b_.delete_stream(n); }
  Result<bus::ConsumerPosition> consumer_position(const bus::ConsumerSettings& s) override {
    return b_.consumer_position(s);
  }
  Result<std::unique_ptr<bus::Consumer>> open_consumer(const bus::ConsumerSettings& s) override {
    return b_.open_consumer(s);
  }
  Result<std::unique_ptr<bus::Consumer>> open_reader(const std::string& stream,
                                                     uint64_t start) override {
    if (readers_down) return Status::unavailable("JetStream not available (stream leader)");
    return b_.open_reader(stream, start);
  }
  Result<std::unique_ptr<bus::Consumer>> open_tail(const std::string& stream,
                                                   const std::string& filter) override {
    return b_.open_tail(stream, filter);
  }
  Status flush(std::chrono::milliseconds t) override { return b_.flush(t); }
  int64_t max_payload() const override { return b_.max_payload(); }
  Result<std::unique_ptr<bus::KeyValue>> open_kv(const bus::KvSettings& s) override {
    return b_.open_kv(s);
  }
  Status delete_kv(const std::string& bucket) override { return b_.delete_kv(bucket); }

 private:
  bus::Bus& b_;
};

void publish_nodes(bus::Bus& b, const std::string& root, int n) {
  bus::Subjects s(root);
  for (int i = 0; i < n; ++i) {
    std::string name = "n" + std::to_string(i);
    auto ev = wire::make_object_event(
        wire::ChangeType::kAdded,
        R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"("}})", "ev-" + name,
        "test", wire::EventTime(std::chrono::seconds(100 + i)));
    ASSERT_TRUE(b.publish_stored(wire::encode_event(ev, s.events("", "Node")), ev.id()).is_ok());
  }
}

// Another subscriber of the daemon's durable consumer takes the next `n` and drops them.
void steal(bus::Bus& b, const DaemonConfig& cfg, std::size_t n, uint64_t first) {
  bus::ConsumerSettings thief;
  thief.stream = cfg.events_stream.name;
  thief.durable = cfg.intake.durable;
  thief.prefetch_batches = 0;
  auto other = b.open_consumer(thief);
  ASSERT_TRUE(other.is_ok()) << other.status().message();
  auto taken = (*other)->fetch(n, std::chrono::seconds(2));
  ASSERT_TRUE(taken.is_ok());
  ASSERT_EQ((*taken)->size(), n);
  EXPECT_EQ((*taken)->stream_sequence(0), first);
}

TEST_F(DaemonGap, EventsThatArriveAfterLaterOnesAreReadFromTheStreamInOrder) {
  auto b = bus::connect_nats({.url = url()});
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  DaemonConfig cfg = default_config("gap");
  cfg.tick_interval = std::chrono::milliseconds(0);
  cfg.intake.fetch_batch = 5;
  cfg.intake.prefetch_batches = 0;
  Daemon d(cfg, **b, nullptr);
  ASSERT_TRUE(d.start().is_ok());
  publish_nodes(**b, "gap", 20);
  auto first = d.step(std::chrono::seconds(2));
  ASSERT_TRUE(first.is_ok());
  EXPECT_EQ(d.stats().last_applied_sequence, 5u);
  steal(**b, cfg, 5, 6);
  for (int i = 0; i < 20 && d.stats().last_applied_sequence < 20; ++i)
    ASSERT_TRUE(d.step(std::chrono::milliseconds(500)).is_ok());
  EXPECT_EQ(d.stats().events_applied, 20u);
  EXPECT_EQ(d.stats().last_applied_sequence, 20u);
  d.read([](const ClusterModel& m) { EXPECT_EQ(m.nodes().size(), 20u); });
}

TEST_F(DaemonGap, EventsAfterAGapTheStreamCannotFillYetWaitAndNoneIsLost) {
  auto real = bus::connect_nats({.url = url()});
  ASSERT_TRUE(real.is_ok()) << real.status().message();
  ReadersDownBus b(**real);
  DaemonConfig cfg = default_config("gap2");
  cfg.tick_interval = std::chrono::milliseconds(0);
  cfg.intake.fetch_batch = 5;
  cfg.intake.prefetch_batches = 0;
  Daemon d(cfg, b, nullptr);
  ASSERT_TRUE(d.start().is_ok());
  publish_nodes(b, "gap2", 20);
  ASSERT_TRUE(d.step(std::chrono::seconds(2)).is_ok());
  ASSERT_EQ(d.stats().last_applied_sequence, 5u);
  steal(b, cfg, 5, 6);

  // 11 to 15 arrive; 6 to 10 cannot be read: nothing is applied past 5, and nothing acknowledged.
  b.readers_down = true;
  ASSERT_TRUE(d.step(std::chrono::seconds(2)).is_ok());
  EXPECT_EQ(d.stats().last_applied_sequence, 5u);
  EXPECT_EQ(d.stats().gaps_deferred, 1u);
  auto pos = b.consumer_position({.stream = cfg.events_stream.name, .durable = cfg.intake.durable});
  ASSERT_TRUE(pos.is_ok());
  EXPECT_EQ(pos->ack_floor, 5u) << "acknowledging 15 would acknowledge 6 to 10 (AckAll)";

  // The stream can be read again: 16 to 20 arrive, 6 to 15 are read first, in order.
  b.readers_down = false;
  for (int i = 0; i < 20 && d.stats().last_applied_sequence < 20; ++i)
    ASSERT_TRUE(d.step(std::chrono::milliseconds(500)).is_ok());
  EXPECT_EQ(d.stats().events_applied, 20u);
  EXPECT_EQ(d.stats().last_applied_sequence, 20u);
  d.read([](const ClusterModel& m) { EXPECT_EQ(m.nodes().size(), 20u); });
}

}  // namespace
}  // namespace gpuaas::core
