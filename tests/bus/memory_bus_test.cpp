#include "gpuaas/bus/memory_bus.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace gpuaas::bus {
namespace {

using std::chrono::milliseconds;

std::size_t count(const Result<std::unique_ptr<Batch>>& b) {
  EXPECT_TRUE(b.is_ok()) << b.status().message();
  return b.is_ok() ? b.value()->size() : 0;
}

TEST(SubjectMatchesTest, Literal) {
  EXPECT_TRUE(subject_matches("a.b.c", "a.b.c"));
  EXPECT_FALSE(subject_matches("a.b.c", "a.b"));
  EXPECT_FALSE(subject_matches("a.b", "a.b.c"));
  EXPECT_FALSE(subject_matches("a.b.c", "a.b.d"));
  EXPECT_FALSE(subject_matches("a.b", "a.bc"));
}

TEST(SubjectMatchesTest, StarIsOneToken) {
  EXPECT_TRUE(subject_matches("a.*.c", "a.b.c"));
  EXPECT_TRUE(subject_matches("*.b.*", "x.b.y"));
  EXPECT_TRUE(subject_matches("a.*", "a.b"));
  EXPECT_FALSE(subject_matches("a.*", "a"));
  EXPECT_FALSE(subject_matches("a.*", "a.b.c"));
  EXPECT_FALSE(subject_matches("a.*.c", "a.b.x.c"));
}

TEST(SubjectMatchesTest, GreaterThanIsTheRest) {
  EXPECT_TRUE(subject_matches(">", "a"));
  EXPECT_TRUE(subject_matches(">", "a.b.c"));
  EXPECT_TRUE(subject_matches("a.>", "a.b"));
  EXPECT_TRUE(subject_matches("a.>", "a.b.c.d"));
  EXPECT_TRUE(subject_matches("a.*.>", "a.b.c"));
  EXPECT_FALSE(subject_matches("a.>", "a"));  // '>' needs at least one token
  EXPECT_FALSE(subject_matches("a.>", "b.c"));
  EXPECT_FALSE(subject_matches("a.*.>", "a.b"));
}

// A stream "S" on "s.>" plus a durable "d" on it.
class MemoryBusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bus_ = make_memory_bus();
    ASSERT_TRUE(bus_->ensure_stream(stream_).is_ok());
    cs_.stream = stream_.name;
    cs_.durable = "d";
  }

  PublishAck store(const std::string& subject, const std::string& data,
                   const std::string& id = "") {
    auto ack = bus_->publish_stored({subject, {{"x", data}}, data}, id);
    EXPECT_TRUE(ack.is_ok()) << ack.status().message();
    return ack.is_ok() ? *ack : PublishAck{};
  }

  std::unique_ptr<Bus> bus_;
  StreamSettings stream_{.name = "S", .subjects = {"s.>"}};
  ConsumerSettings cs_;
};

TEST_F(MemoryBusTest, PublishReachesMatchingSubscribers) {
  std::vector<std::string> got;
  auto sub = bus_->subscribe("t.*", [&](const Message& m) { got.push_back(m.data); });
  ASSERT_TRUE(sub.is_ok());
  ASSERT_TRUE(bus_->publish({"t.one", {{"k", "v"}}, "1"}).is_ok());
  ASSERT_TRUE(bus_->publish({"t.one.two", {}, "no"}).is_ok());
  ASSERT_TRUE(bus_->publish({"u.one", {}, "no"}).is_ok());
  EXPECT_EQ(got, std::vector<std::string>{"1"});
  sub->reset();  // unsubscribed: no more callbacks
  ASSERT_TRUE(bus_->publish({"t.one", {}, "2"}).is_ok());
  EXPECT_EQ(got, std::vector<std::string>{"1"});
}

TEST_F(MemoryBusTest, CorePublishOnCapturedSubjectIsStored) {
  // As JetStream: the stream captures the subject whichever way the message was published.
  ASSERT_TRUE(bus_->publish({"s.dead", {}, "1"}).is_ok());
  ASSERT_TRUE(bus_->publish({"elsewhere", {}, "2"}).is_ok());
  EXPECT_EQ(bus_->consumer_position(cs_)->stream_last, 1u);
  auto r = bus_->open_reader("S", 1);
  auto b = (*r)->fetch(10, milliseconds(0));
  ASSERT_EQ((*b)->size(), 1u);
  EXPECT_EQ((*b)->data(0), "1");
}

TEST_F(MemoryBusTest, StoredPublishIsAlsoSeenBySubscribers) {
  int seen = 0;
  auto sub = bus_->subscribe("s.>", [&](const Message&) { ++seen; });
  ASSERT_TRUE(sub.is_ok());
  store("s.a", "1");
  EXPECT_EQ(seen, 1);
}

TEST_F(MemoryBusTest, PublishStoredAssignsSequencesAndDeduplicates) {
  PublishAck a = store("s.a", "1", "id-1");
  EXPECT_EQ(a.stream, "S");
  EXPECT_EQ(a.sequence, 1u);
  EXPECT_FALSE(a.duplicate);
  PublishAck b = store("s.b", "2", "id-2");
  EXPECT_EQ(b.sequence, 2u);
  PublishAck dup = store("s.a", "1 again", "id-1");
  EXPECT_TRUE(dup.duplicate);
  EXPECT_EQ(dup.sequence, 1u);  // the original's sequence, as JetStream answers
  PublishAck no_id = store("s.a", "3");
  EXPECT_EQ(no_id.sequence, 3u);
  auto pos = bus_->consumer_position(cs_);
  ASSERT_TRUE(pos.is_ok());
  EXPECT_EQ(pos->stream_first, 1u);
  EXPECT_EQ(pos->stream_last, 3u);
}

TEST_F(MemoryBusTest, PublishStoredWithoutStreamIsUnavailable) {
  auto ack = bus_->publish_stored({"nowhere.a", {}, "x"}, "");
  ASSERT_FALSE(ack.is_ok());
  EXPECT_EQ(ack.status().code(), StatusCode::kUnavailable);
}

TEST_F(MemoryBusTest, AsyncPublishesAreStored) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(bus_->publish_stored_async({"s.a", {}, std::to_string(i)}, "").is_ok());
  }
  ASSERT_TRUE(bus_->wait_stored(milliseconds(100)).is_ok());
  EXPECT_EQ(bus_->consumer_position(cs_)->stream_last, 10u);
}

TEST_F(MemoryBusTest, DurableFetchesInOrderAndAckMovesFloor) {
  for (int i = 1; i <= 5; ++i) store("s.k" + std::to_string(i), std::to_string(i));
  auto c = bus_->open_consumer(cs_);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  auto b = (*c)->fetch(3, milliseconds(0));
  ASSERT_TRUE(b.is_ok());
  ASSERT_EQ((*b)->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*b)->stream_sequence(i), i + 1);
    EXPECT_EQ((*b)->subject(i), "s.k" + std::to_string(i + 1));
    EXPECT_EQ((*b)->data(i), std::to_string(i + 1));
    EXPECT_EQ((*b)->header(i, "x"), std::to_string(i + 1));
    EXPECT_FALSE((*b)->header(i, "missing").has_value());
  }
  auto pos = bus_->consumer_position(cs_);
  EXPECT_EQ(pos->delivered, 3u);
  EXPECT_EQ(pos->ack_floor, 0u);
  ASSERT_TRUE((*b)->ack().is_ok());
  pos = bus_->consumer_position(cs_);
  EXPECT_EQ(pos->ack_floor, 3u);

  auto rest = (*c)->fetch(10, milliseconds(0));
  ASSERT_EQ((*rest)->size(), 2u);
  EXPECT_EQ((*rest)->stream_sequence(0), 4u);
  EXPECT_EQ((*rest)->stream_sequence(1), 5u);
  EXPECT_EQ(bus_->consumer_position(cs_)->delivered, 5u);
  EXPECT_EQ(count((*c)->fetch(10, milliseconds(0))), 0u);
}

TEST_F(MemoryBusTest, ReopenedDurableResumesAfterAckFloor) {
  for (int i = 1; i <= 4; ++i) store("s.a", std::to_string(i));
  {
    auto c = bus_->open_consumer(cs_);
    auto b = (*c)->fetch(2, milliseconds(0));
    ASSERT_EQ((*b)->size(), 2u);
    ASSERT_TRUE((*b)->ack().is_ok());
    // Fetched but never acked: handed out again to the next binding.
    ASSERT_EQ(count((*c)->fetch(1, milliseconds(0))), 1u);
  }
  auto c = bus_->open_consumer(cs_);
  auto b = (*c)->fetch(10, milliseconds(0));
  ASSERT_EQ((*b)->size(), 2u);
  EXPECT_EQ((*b)->stream_sequence(0), 3u);
  EXPECT_EQ((*b)->data(1), "4");
}

TEST_F(MemoryBusTest, FetchWaitsForAStoredMessage) {
  auto c = bus_->open_consumer(cs_);
  ASSERT_TRUE(c.is_ok());
  std::thread publisher([&] { store("s.late", "late"); });
  // Bounded: the publisher may run before or during the wait; either way the message arrives.
  std::size_t got = 0;
  for (int i = 0; i < 50 && got == 0; ++i) got = count((*c)->fetch(1, milliseconds(100)));
  publisher.join();
  EXPECT_EQ(got, 1u);
}

TEST_F(MemoryBusTest, OpenConsumerOnMissingStreamIsNotFound) {
  ConsumerSettings cs{.stream = "nope", .durable = "d"};
  auto c = bus_->open_consumer(cs);
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

TEST_F(MemoryBusTest, ReaderStartsAtSequenceAndNeedsNoAck) {
  for (int i = 1; i <= 5; ++i) store("s.a", std::to_string(i));
  auto r = bus_->open_reader("S", 3);
  ASSERT_TRUE(r.is_ok());
  auto b = (*r)->fetch(10, milliseconds(0));
  ASSERT_EQ((*b)->size(), 3u);
  EXPECT_EQ((*b)->stream_sequence(0), 3u);
  EXPECT_EQ((*b)->data(2), "5");
  EXPECT_TRUE((*b)->ack().is_ok());
  // Readers leave no trace on durables.
  EXPECT_EQ(bus_->consumer_position(cs_)->delivered, 0u);

  auto from_start = bus_->open_reader("S", 0);
  auto first = (*from_start)->fetch(10, milliseconds(0));
  ASSERT_EQ((*first)->size(), 5u);
  EXPECT_EQ((*first)->stream_sequence(0), 1u);
}

TEST_F(MemoryBusTest, TailSeesOnlyNewMatchingMessages) {
  store("s.watch", "old");
  auto t = bus_->open_tail("S", "s.watch");
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(count((*t)->fetch(10, milliseconds(0))), 0u);
  store("s.other", "skip");
  store("s.watch", "new");
  auto b = (*t)->fetch(10, milliseconds(0));
  ASSERT_EQ((*b)->size(), 1u);
  EXPECT_EQ((*b)->data(0), "new");
  EXPECT_EQ((*b)->stream_sequence(0), 3u);
}

TEST_F(MemoryBusTest, ServeAndRequest) {
  auto srv = bus_->serve("api.echo", "q", [](const Message& m) { return "echo:" + m.data; });
  ASSERT_TRUE(srv.is_ok());
  auto reply = bus_->request({"api.echo", {}, "hi"}, milliseconds(100));
  ASSERT_TRUE(reply.is_ok());
  EXPECT_EQ(reply->data, "echo:hi");
}

TEST_F(MemoryBusTest, RequestWithoutServerIsUnavailable) {
  auto reply = bus_->request({"api.none", {}, "hi"}, milliseconds(100));
  ASSERT_FALSE(reply.is_ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  // A plain subscriber is not a responder.
  auto sub = bus_->subscribe("api.none", [](const Message&) {});
  EXPECT_FALSE(bus_->request({"api.none", {}, "hi"}, milliseconds(100)).is_ok());
}

TEST_F(MemoryBusTest, EnsureStreamUpdatesSubjectsAndKeepsMessages) {
  store("s.a", "1");
  EXPECT_FALSE(bus_->publish_stored({"s2.a", {}, "x"}, "").is_ok());
  StreamSettings wider = stream_;
  wider.subjects.push_back("s2.>");
  ASSERT_TRUE(bus_->ensure_stream(wider).is_ok());
  auto ack = bus_->publish_stored({"s2.a", {}, "x"}, "");
  ASSERT_TRUE(ack.is_ok());
  EXPECT_EQ(ack->sequence, 2u);
}

TEST_F(MemoryBusTest, DeleteStream) {
  store("s.a", "1");
  ASSERT_TRUE(bus_->delete_stream("S").is_ok());
  EXPECT_EQ(bus_->consumer_position(cs_).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(bus_->publish_stored({"s.a", {}, "1"}, "").is_ok());
  EXPECT_TRUE(bus_->delete_stream("S").is_ok());  // deleting what is gone is fine
}

}  // namespace
}  // namespace gpuaas::bus
