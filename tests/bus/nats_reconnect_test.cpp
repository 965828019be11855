// The NATS bus across server restarts and late starts. Own suites (and so own servers), since
// stopping a server would disturb every other test.
#include <gtest/gtest.h>

#include "bus_test_util.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/nats_server_process.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::bus {
namespace {

using namespace std::chrono_literals;
using test::Clock;
using test::eventually;
using test::fetch_n;

class NatsReconnectTest : public gpuaas::testing::NatsServerTest {};

TEST_F(NatsReconnectTest, PublishStoredSucceedsAfterServerRestart) {
  NatsOptions o;
  o.url = url();
  o.retry_on_failed_connect = true;
  o.max_reconnect = -1;
  o.reconnect_wait = 50ms;
  o.request_timeout = 1s;
  auto connected = connect_nats(o);
  ASSERT_TRUE(connected.is_ok()) << connected.status().message();
  auto& bus = **connected;

  StreamSettings stream{.name = "RECONNECT", .subjects = {"rc.>"}};
  ASSERT_TRUE(bus.ensure_stream(stream).is_ok());
  for (int i = 1; i <= 3; ++i) {
    auto ack = bus.publish_stored({"rc.a", {}, std::to_string(i)}, "m" + std::to_string(i));
    ASSERT_TRUE(ack.is_ok()) << ack.status().message();
  }
  ConsumerSettings cs{.stream = stream.name, .durable = "d", .prefetch_batches = 0};
  auto consumer = bus.open_consumer(cs);
  ASSERT_TRUE(consumer.is_ok()) << consumer.status().message();
  std::vector<std::unique_ptr<Batch>> batches;
  ASSERT_EQ(fetch_n(**consumer, 3, 10s, &batches).size(), 3u);
  ASSERT_TRUE(batches.back()->ack().is_ok());
  ASSERT_TRUE(eventually([&] {
    auto pos = bus.consumer_position(cs);
    return pos.is_ok() && pos->ack_floor == 3;
  }));

  server().stop();
  // Down: a stored publish cannot be confirmed. It may still be sent from the reconnect buffer
  // later, which is why callers retry with the same msg id.
  auto down = bus.publish_stored({"rc.a", {}, "4"}, "m4");
  ASSERT_FALSE(down.is_ok());
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable);

  ASSERT_TRUE(server().restart().is_ok());
  Result<PublishAck> ack = Status::unavailable("not tried");
  auto deadline = Clock::now() + 20s;
  while (Clock::now() < deadline) {
    ack = bus.publish_stored({"rc.a", {}, "4"}, "m4");
    if (ack.is_ok()) break;
  }
  ASSERT_TRUE(ack.is_ok()) << ack.status().message();
  EXPECT_EQ(ack->sequence, 4u);  // the file store kept 1..3; m4 is stored once whichever way

  // The earlier messages survived the restart.
  auto pos = bus.consumer_position(cs);
  ASSERT_TRUE(pos.is_ok()) << pos.status().message();
  EXPECT_EQ(pos->stream_first, 1u);
  EXPECT_EQ(pos->stream_last, 4u);
  EXPECT_EQ(pos->ack_floor, 3u);
  auto reader = bus.open_reader(stream.name, 1);
  ASSERT_TRUE(reader.is_ok()) << reader.status().message();
  auto all = fetch_n(**reader, 4);
  ASSERT_EQ(all.size(), 4u);
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].data, std::to_string(i + 1));

  // The durable bound before the restart carries on where it was acked (the daemon keeps
  // its consumer across server restarts).
  auto next = fetch_n(**consumer, 1, 15s);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].seq, 4u);
}

// The daemon may start before the server: with retry_on_failed_connect the bus comes up at once
// and works as soon as the server does.
TEST(NatsLateServerTest, RetryingConnectionWaitsForTheServer) {
  int port = NatsServerProcess::free_port();
  NatsOptions o;
  o.url = "nats://127.0.0.1:" + std::to_string(port);
  o.retry_on_failed_connect = true;
  o.reconnect_wait = 50ms;
  o.request_timeout = 1s;
  auto connected = connect_nats(o);
  ASSERT_TRUE(connected.is_ok()) << connected.status().message();
  auto& bus = **connected;

  auto server = NatsServerProcess::start({.port = port});
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  StreamSettings stream{.name = "LATE", .subjects = {"late.>"}, .storage = Storage::kMemory};
  Status st = Status::unavailable("not tried");
  auto deadline = Clock::now() + 20s;
  while (!st.is_ok() && Clock::now() < deadline) st = bus.ensure_stream(stream);
  ASSERT_TRUE(st.is_ok()) << st.message();
  auto ack = bus.publish_stored({"late.a", {}, "x"}, "");
  ASSERT_TRUE(ack.is_ok()) << ack.status().message();
  EXPECT_EQ(ack->sequence, 1u);
}

}  // namespace
}  // namespace gpuaas::bus
