// The NATS bus against a real nats-server with JetStream (one server for the suite; every test
// uses its own stream and subjects, named after the test).
#include "gpuaas/bus/nats_bus.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "bus_test_util.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::bus {
namespace {

using namespace std::chrono_literals;
using test::Clock;
using test::eventually;
using test::fetch_n;
using test::test_name;

class NatsBusTest : public gpuaas::testing::NatsServerTest {
 protected:
  void SetUp() override {
    bus_ = connect();
    ASSERT_NE(bus_, nullptr);
    prefix_ = "t." + test_name();
    stream_.name = "T_" + test_name();
    stream_.subjects = {prefix_ + ".>"};
    ASSERT_TRUE(bus_->ensure_stream(stream_).is_ok());
    cs_.stream = stream_.name;
    cs_.durable = "d";
    cs_.prefetch_batches = 0;
  }

  static std::unique_ptr<Bus> connect() {
    NatsOptions o;
    o.url = url();
    o.request_timeout = 2s;
    auto b = connect_nats(o);
    EXPECT_TRUE(b.is_ok()) << b.status().message();
    return b.is_ok() ? std::move(b).value() : nullptr;
  }

  std::string subject(const std::string& leaf) const { return prefix_ + "." + leaf; }

  PublishAck store(const std::string& leaf, const std::string& data, const std::string& id = "") {
    auto ack = bus_->publish_stored({subject(leaf), {{"x", "h" + data}}, data}, id);
    EXPECT_TRUE(ack.is_ok()) << ack.status().message();
    return ack.is_ok() ? *ack : PublishAck{};
  }

  uint64_t stream_last() {
    auto pos = bus_->consumer_position(cs_);
    EXPECT_TRUE(pos.is_ok()) << pos.status().message();
    return pos.is_ok() ? pos->stream_last : 0;
  }

  // Fetches five stored messages through a durable with the given prefetch depth, checks what
  // arrived, acks and waits for the ack floor.
  void check_durable(int prefetch_batches) {
    for (int i = 1; i <= 5; ++i) store("k" + std::to_string(i), std::to_string(i));
    cs_.prefetch_batches = prefetch_batches;
    cs_.fetch_batch = 2;  // several batches, so order across batches is checked too
    auto c = bus_->open_consumer(cs_);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    std::vector<std::unique_ptr<Batch>> batches;
    auto got = fetch_n(**c, 5, 10s, &batches);
    ASSERT_EQ(got.size(), 5u);
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(got[i].seq, i + 1);
      EXPECT_EQ(got[i].subject, subject("k" + std::to_string(i + 1)));
      EXPECT_EQ(got[i].data, std::to_string(i + 1));
      EXPECT_EQ(got[i].x, "h" + std::to_string(i + 1));
    }
    EXPECT_FALSE(batches.front()->header(0, "missing").has_value());
    auto pos = bus_->consumer_position(cs_);
    ASSERT_TRUE(pos.is_ok());
    EXPECT_EQ(pos->delivered, 5u);
    EXPECT_EQ(pos->ack_floor, 0u);
    // AckAll: acking the last batch acknowledges everything before it. Acks are asynchronous.
    ASSERT_TRUE(batches.back()->ack().is_ok());
    EXPECT_TRUE(eventually([&] { return bus_->consumer_position(cs_)->ack_floor == 5; }));
  }

  std::unique_ptr<Bus> bus_;
  std::string prefix_;
  StreamSettings stream_;
  ConsumerSettings cs_;
};

TEST_F(NatsBusTest, ConnectsAndFlushes) { EXPECT_TRUE(bus_->flush(2s).is_ok()); }

TEST(NatsConnectTest, NothingListeningFailsFastNamingTheUrl) {
  NatsOptions o;
  o.url = "nats://127.0.0.1:" + std::to_string(NatsServerProcess::free_port());
  o.retry_on_failed_connect = false;
  auto start = Clock::now();
  auto b = connect_nats(o);
  auto elapsed = Clock::now() - start;
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(b.status().message().find(o.url), std::string::npos) << b.status().message();
  EXPECT_LT(elapsed, 2s);
}

TEST_F(NatsBusTest, EnsureStreamIsIdempotentAndUpdatesSubjects) {
  store("a", "1");
  ASSERT_TRUE(bus_->ensure_stream(stream_).is_ok());
  ASSERT_TRUE(bus_->ensure_stream(stream_).is_ok());
  EXPECT_EQ(stream_last(), 1u);  // not recreated

  const std::string extra = "t2." + test_name();
  auto before = bus_->publish_stored({extra + ".a", {}, "x"}, "");
  ASSERT_FALSE(before.is_ok());
  StreamSettings wider = stream_;
  wider.subjects.push_back(extra + ".>");
  ASSERT_TRUE(bus_->ensure_stream(wider).is_ok());
  auto after = bus_->publish_stored({extra + ".a", {}, "x"}, "");
  ASSERT_TRUE(after.is_ok()) << after.status().message();
  EXPECT_EQ(after->stream, stream_.name);
  EXPECT_EQ(after->sequence, 2u);  // updated in place: the first message is still there
}

TEST_F(NatsBusTest, PublishStoredDeduplicatesByMsgId) {
  PublishAck first = store("a", "1", "id-1");
  EXPECT_EQ(first.stream, stream_.name);
  EXPECT_EQ(first.sequence, 1u);
  EXPECT_FALSE(first.duplicate);
  PublishAck dup = store("a", "1", "id-1");
  EXPECT_TRUE(dup.duplicate);
  EXPECT_EQ(dup.sequence, 1u);
  EXPECT_EQ(stream_last(), 1u);
  PublishAck second = store("a", "2", "id-2");
  EXPECT_FALSE(second.duplicate);
  EXPECT_EQ(second.sequence, 2u);
  EXPECT_EQ(store("a", "3").sequence, 3u);  // no id: never deduplicated
  EXPECT_EQ(store("a", "3").sequence, 4u);
}

TEST_F(NatsBusTest, PublishStoredWithoutStreamIsUnavailable) {
  auto start = Clock::now();
  auto ack = bus_->publish_stored({"nostream." + test_name(), {}, "x"}, "");
  ASSERT_FALSE(ack.is_ok());
  EXPECT_EQ(ack.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(Clock::now() - start, 1s);  // no responders is immediate, not a timeout
}

TEST_F(NatsBusTest, DurableFetchOrderAndAckWithoutPrefetch) { check_durable(0); }

TEST_F(NatsBusTest, DurableFetchOrderAndAckWithPrefetch) { check_durable(2); }

TEST_F(NatsBusTest, FetchTimesOutEmpty) {
  auto c = bus_->open_consumer(cs_);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  auto b = (*c)->fetch(10, 100ms);
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_EQ((*b)->size(), 0u);
  EXPECT_TRUE((*b)->ack().is_ok());  // acking nothing is fine
}

TEST_F(NatsBusTest, UnackedMessagesComeBackAfterAckWait) {
  for (int i = 1; i <= 3; ++i) store("a", std::to_string(i));
  cs_.ack_wait = 1s;
  auto start = Clock::now();
  {
    auto c = bus_->open_consumer(cs_);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    ASSERT_EQ(fetch_n(**c, 3).size(), 3u);
  }  // dropped without ack
  auto c = bus_->open_consumer(cs_);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  // Still within the ack wait: the messages are out with the first binding.
  auto early = (*c)->fetch(10, 200ms);
  ASSERT_TRUE(early.is_ok());
  if (Clock::now() - start < 1s) {
    EXPECT_EQ((*early)->size(), 0u);
  }
  auto again = fetch_n(**c, 3);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_GE(Clock::now() - start, 1s);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(again[i].seq, i + 1);
  EXPECT_EQ(bus_->consumer_position(cs_)->ack_floor, 0u);
}

TEST_F(NatsBusTest, EnsureConsumerUpdatesAckWait) {
  store("a", "1");
  ASSERT_TRUE(bus_->ensure_consumer(cs_).is_ok());  // ack wait 30 s
  cs_.ack_wait = 1s;
  ASSERT_TRUE(bus_->ensure_consumer(cs_).is_ok());
  {
    auto c = bus_->open_consumer(cs_);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    ASSERT_EQ(fetch_n(**c, 1).size(), 1u);
  }
  // Redelivered after the new 1 s, well before the old 30 s.
  auto c = bus_->open_consumer(cs_);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(fetch_n(**c, 1, 10s).size(), 1u);
}

TEST_F(NatsBusTest, ReopenedDurableResumesAfterAckFloor) {
  for (int i = 1; i <= 4; ++i) store("a", std::to_string(i));
  {
    auto c = bus_->open_consumer(cs_);
    std::vector<std::unique_ptr<Batch>> batches;
    ASSERT_EQ(fetch_n(**c, 2, 10s, &batches).size(), 2u);
    ASSERT_TRUE(batches.back()->ack().is_ok());
    EXPECT_TRUE(eventually([&] { return bus_->consumer_position(cs_)->ack_floor == 2; }));
  }
  auto c = bus_->open_consumer(cs_);
  auto got = fetch_n(**c, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].seq, 3u);
  EXPECT_EQ(got[1].seq, 4u);
}

TEST_F(NatsBusTest, ReaderReadsFromSequenceWithoutAcks) {
  for (int i = 1; i <= 5; ++i) store("a", std::to_string(i));
  auto r = bus_->open_reader(stream_.name, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  auto got = fetch_n(**r, 3);
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].seq, i + 3);
    EXPECT_EQ(got[i].data, std::to_string(i + 3));
  }
  // Nothing is handed out twice (no acks expected), and the durable is untouched.
  auto more = (*r)->fetch(10, 100ms);
  ASSERT_TRUE(more.is_ok());
  EXPECT_EQ((*more)->size(), 0u);
  EXPECT_EQ(bus_->consumer_position(cs_)->delivered, 0u);

  auto all = bus_->open_reader(stream_.name, 1);
  ASSERT_TRUE(all.is_ok());
  auto every = fetch_n(**all, 5);
  ASSERT_EQ(every.size(), 5u);
  EXPECT_EQ(every.front().seq, 1u);
  EXPECT_EQ(every.back().seq, 5u);
}

TEST_F(NatsBusTest, ReaderOnMissingStreamFails) {
  auto r = bus_->open_reader("NoSuch_" + test_name(), 1);
  EXPECT_FALSE(r.is_ok());
}

TEST_F(NatsBusTest, TailSeesOnlyNewMatchingMessages) {
  store("watch", "old");
  auto t = bus_->open_tail(stream_.name, subject("watch"));
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  store("other", "skip");
  store("watch", "new");
  auto got = fetch_n(**t, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, "new");
  EXPECT_EQ(got[0].seq, 3u);
  auto more = (*t)->fetch(10, 100ms);
  ASSERT_TRUE(more.is_ok());
  EXPECT_EQ((*more)->size(), 0u);
}

TEST_F(NatsBusTest, SubscribeReceivesCorePublishes) {
  std::mutex mu;
  std::vector<Message> got;
  auto sub = bus_->subscribe("core." + test_name() + ".*", [&](const Message& m) {
    std::lock_guard lock(mu);
    got.push_back(m);
  });
  ASSERT_TRUE(sub.is_ok()) << sub.status().message();
  ASSERT_TRUE(bus_->flush(2s).is_ok());  // the server knows the subscription
  auto other = connect();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->publish({"core." + test_name() + ".a", {{"x", "1"}}, "hello"}).is_ok());
  ASSERT_TRUE(other->publish({"core." + test_name() + ".a.b", {}, "not matched"}).is_ok());
  ASSERT_TRUE(other->publish({"core." + test_name() + ".c", {}, "second"}).is_ok());
  ASSERT_TRUE(other->flush(2s).is_ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mu);
    return got.size() >= 2;
  }));
  sub->reset();  // drains: no callback after this
  std::lock_guard lock(mu);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].subject, "core." + test_name() + ".a");
  EXPECT_EQ(got[0].data, "hello");
  EXPECT_EQ(got[0].header("x"), "1");
  EXPECT_EQ(got[1].data, "second");
}

TEST_F(NatsBusTest, CorePublishOnCapturedSubjectIsStored) {
  // The memory bus mirrors this: dead letters are published plainly and still land in a stream.
  ASSERT_TRUE(bus_->publish({subject("dead"), {}, "1"}).is_ok());
  ASSERT_TRUE(bus_->flush(2s).is_ok());
  EXPECT_TRUE(eventually([&] { return stream_last() == 1; }));
}

TEST_F(NatsBusTest, ServeAndRequest) {
  const std::string s = "api." + test_name();
  auto srv = bus_->serve(s, "q", [](const Message& m) {
    return "echo:" + m.data + ":" + std::string(m.header("x").value_or("-"));
  });
  ASSERT_TRUE(srv.is_ok()) << srv.status().message();
  ASSERT_TRUE(bus_->flush(2s).is_ok());
  auto client = connect();
  ASSERT_NE(client, nullptr);
  auto reply = client->request({s, {{"x", "y"}}, "hi"}, 2s);
  ASSERT_TRUE(reply.is_ok()) << reply.status().message();
  EXPECT_EQ(reply->data, "echo:hi:y");
}

TEST_F(NatsBusTest, RequestWithoutResponderIsUnavailableFast) {
  auto start = Clock::now();
  auto reply = bus_->request({"api.nobody." + test_name(), {}, "hi"}, 5s);
  ASSERT_FALSE(reply.is_ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST_F(NatsBusTest, AsyncPublishesAreAllStored) {
  constexpr int kCount = 1000;
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(
        bus_->publish_stored_async({subject("a"), {}, std::to_string(i)}, "m" + std::to_string(i))
            .is_ok());
  }
  auto st = bus_->wait_stored(10s);
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(stream_last(), static_cast<uint64_t>(kCount));
  auto r = bus_->open_reader(stream_.name, kCount);
  auto last = fetch_n(**r, 1);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].data, std::to_string(kCount - 1));
}

TEST_F(NatsBusTest, WaitStoredReportsFailedAsyncPublishes) {
  // A subject no stream captures: the async publish itself is accepted, its ack never comes.
  ASSERT_TRUE(bus_->publish_stored_async({"nostream." + test_name(), {}, "x"}, "").is_ok());
  auto st = bus_->wait_stored(3s);
  EXPECT_FALSE(st.is_ok());
  // The failure is reported once; the next wait starts clean.
  ASSERT_TRUE(bus_->publish_stored_async({subject("a"), {}, "x"}, "").is_ok());
  EXPECT_TRUE(bus_->wait_stored(3s).is_ok());
}

TEST_F(NatsBusTest, DeleteStream) {
  store("a", "1");
  ASSERT_TRUE(bus_->delete_stream(stream_.name).is_ok());
  auto pos = bus_->consumer_position(cs_);
  ASSERT_FALSE(pos.is_ok());
  EXPECT_EQ(pos.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bus_->publish_stored({subject("a"), {}, "x"}, "").status().code(),
            StatusCode::kUnavailable);
  EXPECT_TRUE(bus_->delete_stream(stream_.name).is_ok());  // already gone is fine
  ASSERT_TRUE(bus_->ensure_stream(stream_).is_ok());
  EXPECT_EQ(store("a", "1").sequence, 1u);  // a new stream starts over
}

}  // namespace
}  // namespace gpuaas::bus
