// KV buckets on both buses: the same tests run on a real nats-server and on the in-process bus.
#include <gtest/gtest.h>

#include <string>

#include "bus_test_util.hpp"
#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::bus {
namespace {

using namespace std::chrono_literals;
using test::eventually;

class KvTest : public gpuaas::testing::NatsServerTest,
               public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "memory") {
      bus_ = make_memory_bus();
      return;
    }
    NatsOptions o;
    o.url = url();
    auto b = connect_nats(o);
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    bus_ = std::move(b).value();
  }

  // A bucket named after the test, empty.
  std::unique_ptr<KeyValue> open(KvSettings ks = {}) {
    if (ks.bucket.empty()) ks.bucket = bucket_name();
    EXPECT_TRUE(bus_->delete_kv(ks.bucket).is_ok());
    auto kv = bus_->open_kv(ks);
    EXPECT_TRUE(kv.is_ok()) << kv.status().message();
    return kv.is_ok() ? std::move(kv).value() : nullptr;
  }
  static std::string bucket_name() {
    std::string n = test::test_name();
    for (char& c : n) {
      if (c == '/') c = '_';
    }
    return n;
  }

  std::unique_ptr<Bus> bus_;
};

TEST_P(KvTest, PutGetAndRevisionsIncrease) {
  auto kv = open();
  ASSERT_TRUE(kv);
  auto absent = kv->get("a");
  ASSERT_TRUE(absent.is_ok()) << absent.status().message();
  EXPECT_FALSE(absent->has_value());

  auto r1 = kv->put("a", "one");
  ASSERT_TRUE(r1.is_ok()) << r1.status().message();
  auto r2 = kv->put("b.c", std::string("t\0wo", 4));
  ASSERT_TRUE(r2.is_ok()) << r2.status().message();
  auto r3 = kv->put("a", "three");
  ASSERT_TRUE(r3.is_ok()) << r3.status().message();
  EXPECT_LT(*r1, *r2);
  EXPECT_LT(*r2, *r3);

  auto a = kv->get("a");
  ASSERT_TRUE(a.is_ok() && a->has_value()) << a.status().message();
  EXPECT_EQ((*a)->value, "three");
  EXPECT_EQ((*a)->revision, *r3);
  auto b = kv->get("b.c");
  ASSERT_TRUE(b.is_ok() && b->has_value());
  EXPECT_EQ((*b)->value, std::string("t\0wo", 4));  // binary values round-trip
  EXPECT_EQ((*b)->revision, *r2);
}

TEST_P(KvTest, CreateFailsWithConflictWhenPresentAndSucceedsAfterRemove) {
  auto kv = open();
  ASSERT_TRUE(kv);
  auto c1 = kv->create("lease", "x");
  ASSERT_TRUE(c1.is_ok()) << c1.status().message();
  auto c2 = kv->create("lease", "y");
  ASSERT_FALSE(c2.is_ok());
  EXPECT_EQ(c2.status().code(), StatusCode::kConflict) << c2.status().message();
  EXPECT_NE(c2.status().message().find("lease"), std::string::npos) << c2.status().message();

  ASSERT_TRUE(kv->remove("lease").is_ok());
  auto gone = kv->get("lease");
  ASSERT_TRUE(gone.is_ok());
  EXPECT_FALSE(gone->has_value());
  auto c3 = kv->create("lease", "y");
  ASSERT_TRUE(c3.is_ok()) << c3.status().message();
  EXPECT_GT(*c3, *c1);
  auto now = kv->get("lease");
  ASSERT_TRUE(now.is_ok() && now->has_value());
  EXPECT_EQ((*now)->value, "y");
  // Removing an absent key is fine.
  EXPECT_TRUE(kv->remove("never-written").is_ok());
}

TEST_P(KvTest, ConditionalRemoveOnlyDeletesTheExpectedRevision) {
  auto kv = open();
  ASSERT_TRUE(kv);
  auto r1 = kv->create("lease", "a");
  ASSERT_TRUE(r1.is_ok()) << r1.status().message();
  auto r2 = kv->update("lease", "b", *r1);
  ASSERT_TRUE(r2.is_ok()) << r2.status().message();
  auto st = kv->remove("lease", *r1);  // a holder that lost the key must not delete b's
  EXPECT_EQ(st.code(), StatusCode::kConflict) << st.message();
  auto still = kv->get("lease");
  ASSERT_TRUE(still.is_ok() && still->has_value());
  EXPECT_EQ((*still)->value, "b");
  ASSERT_TRUE(kv->remove("lease", *r2).is_ok());
  auto gone = kv->get("lease");
  ASSERT_TRUE(gone.is_ok());
  EXPECT_FALSE(gone->has_value());
}

TEST_P(KvTest, UpdateNeedsTheLatestRevision) {
  auto kv = open();
  ASSERT_TRUE(kv);
  auto r1 = kv->create("k", "1");
  ASSERT_TRUE(r1.is_ok()) << r1.status().message();
  auto r2 = kv->update("k", "2", *r1);
  ASSERT_TRUE(r2.is_ok()) << r2.status().message();
  auto stale = kv->update("k", "3", *r1);
  ASSERT_FALSE(stale.is_ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kConflict) << stale.status().message();
  auto v = kv->get("k");
  ASSERT_TRUE(v.is_ok() && v->has_value());
  EXPECT_EQ((*v)->value, "2");

  // A key never written has no revision to match.
  auto absent = kv->update("other", "x", *r2);
  EXPECT_EQ(absent.status().code(), StatusCode::kConflict) << absent.status().message();
  // 0 would mean "no expectation" to the server: refused rather than turned into a put.
  EXPECT_EQ(kv->update("k", "x", 0).status().code(), StatusCode::kInvalidInput);
}

TEST_P(KvTest, BadKeysAndBucketsAreRefusedWithTheirName) {
  auto kv = open();
  ASSERT_TRUE(kv);
  for (const char* key : {"", ".a", "a.", "a..b", "a b", "a*", "a>"}) {
    auto r = kv->put(key, "v");
    ASSERT_FALSE(r.is_ok()) << key;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << key;
    EXPECT_NE(r.status().message().find(bucket_name()), std::string::npos) << r.status().message();
    EXPECT_EQ(kv->get(key).status().code(), StatusCode::kInvalidInput) << key;
  }
  auto bad = bus_->open_kv({.bucket = "no.dots"});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(bad.status().message().find("no.dots"), std::string::npos);
  EXPECT_EQ(bus_->open_kv({.bucket = "h", .history = 65}).status().code(),
            StatusCode::kInvalidInput);
}

TEST_P(KvTest, OversizedValueIsAClearErrorAndChunksCarryIt) {
  auto kv = open();
  ASSERT_TRUE(kv);
  const int64_t limit = kv->max_value_size();
  EXPECT_GT(limit, 512 * 1024);  // nats-server 2.9's default max_payload is 1 MB
  EXPECT_LE(limit, 1024 * 1024);
  std::string big(static_cast<std::size_t>(limit) + 1, 'x');
  auto r = kv->put("snap", big);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("put_chunked"), std::string::npos) << r.status().message();
  std::string at_limit(static_cast<std::size_t>(limit), 'y');
  auto fits = kv->put("snap", at_limit);
  ASSERT_TRUE(fits.is_ok()) << fits.status().message();

  // 3.5 MB in chunks, then a smaller value: the reader sees each whole, never a mix.
  std::string snapshot;
  for (int i = 0; snapshot.size() < 3'500'000; ++i) snapshot += std::to_string(i) + ",";
  auto w1 = put_chunked(*kv, "state", snapshot);
  ASSERT_TRUE(w1.is_ok()) << w1.status().message();
  auto r1 = get_chunked(*kv, "state");
  ASSERT_TRUE(r1.is_ok() && r1->has_value()) << r1.status().message();
  EXPECT_EQ((*r1)->value, snapshot);
  EXPECT_EQ((*r1)->revision, *w1);

  std::string second = snapshot.substr(0, static_cast<std::size_t>(limit) + 10);
  auto w2 = put_chunked(*kv, "state", second);
  ASSERT_TRUE(w2.is_ok()) << w2.status().message();
  auto r2 = get_chunked(*kv, "state");
  ASSERT_TRUE(r2.is_ok() && r2->has_value()) << r2.status().message();
  EXPECT_EQ((*r2)->value, second);
  auto w3 = put_chunked(*kv, "state", "");
  ASSERT_TRUE(w3.is_ok()) << w3.status().message();
  auto r3 = get_chunked(*kv, "state");
  ASSERT_TRUE(r3.is_ok() && r3->has_value());
  EXPECT_EQ((*r3)->value, "");
  auto none = get_chunked(*kv, "nothing");
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
  // A plain value reads through get_chunked too.
  ASSERT_TRUE(kv->put("plain", "p").is_ok());
  auto plain = get_chunked(*kv, "plain");
  ASSERT_TRUE(plain.is_ok() && plain->has_value());
  EXPECT_EQ((*plain)->value, "p");
}

TEST_P(KvTest, BucketMaxValueSizeIsEnforced) {
  auto kv = open({.bucket = bucket_name(), .max_value_size = 4096});
  ASSERT_TRUE(kv);
  EXPECT_LE(kv->max_value_size(), 4096);
  auto r = kv->put("k", std::string(5000, 'x'));
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << r.status().message();
  EXPECT_TRUE(kv->put("k", std::string(1000, 'x')).is_ok());
}

TEST_P(KvTest, ValuesExpireAfterTheBucketTtl) {
  auto kv = open({.bucket = bucket_name(), .ttl = 1s});
  ASSERT_TRUE(kv);
  auto r = kv->create("lease", "holder-a");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(kv->create("lease", "holder-b").status().code(), StatusCode::kConflict);
  // The server expires by age on its own timer: a bounded wait, no assertion on the timing.
  ASSERT_TRUE(eventually(
      [&] {
        auto g = kv->get("lease");
        return g.is_ok() && !g->has_value();
      },
      5s));
  auto again = kv->create("lease", "holder-b");
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_GT(*again, *r);  // revisions never go back, even after expiry
  // An update against the expired revision loses.
  EXPECT_EQ(kv->update("lease", "holder-a", *r).status().code(), StatusCode::kConflict);
}

TEST_P(KvTest, ReopeningKeepsValuesAndAppliesNewSettings) {
  auto kv = open();
  ASSERT_TRUE(kv);
  ASSERT_TRUE(kv->put("k", "v").is_ok());
  auto again = bus_->open_kv({.bucket = bucket_name(), .ttl = 60s, .history = 2});
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  auto v = (*again)->get("k");
  ASSERT_TRUE(v.is_ok() && v->has_value()) << v.status().message();
  EXPECT_EQ((*v)->value, "v");
  ASSERT_TRUE(bus_->delete_kv(bucket_name()).is_ok());
  EXPECT_FALSE(kv->get("k").is_ok());  // the bucket is gone
}

INSTANTIATE_TEST_SUITE_P(Buses, KvTest, ::testing::Values("memory", "nats"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
}  // namespace gpuaas::bus
