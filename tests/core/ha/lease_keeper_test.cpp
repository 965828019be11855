// Two LeaseKeepers on one key of a real nats-server's KV bucket: one leads, the other takes over
// when the leader's keeper stops (after the TTL) or when it releases (at the next attempt); a
// lease won by a slow answer is renewed before it lapses.
#include "ha/lease_keeper.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gpuaas/bus/nats_bus.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core::ha {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

template <typename Pred>
bool wait_until(Pred done, std::chrono::milliseconds bound) {
  for (auto deadline = Clock::now() + bound; Clock::now() < deadline;) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

// The real bucket behind answers that take `delay` to come back, as an overloaded server's do.
class SlowKv : public bus::KeyValue {
 public:
  explicit SlowKv(bus::KeyValue& kv) : bus::KeyValue(kv.bucket()), kv_(kv) {}
  std::atomic<int> get_delay_ms{0};

  Result<std::optional<bus::KvEntry>> get(const std::string& key) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(get_delay_ms.load()));
    return kv_.get(key);
  }
  Result<uint64_t> put(const std::string& key, std::string_view value) override {
    return kv_.put(key, value);
  }
  Result<uint64_t> create(const std::string& key, std::string_view value) override {
    return kv_.create(key, value);
  }
  Result<uint64_t> update(const std::string& key, std::string_view value,
                          uint64_t last_revision) override {
    return kv_.update(key, value, last_revision);
  }
  Status remove(const std::string& key, uint64_t last_revision) override {
    return kv_.remove(key, last_revision);
  }
  int64_t max_value_size() const override { return kv_.max_value_size(); }

 private:
  bus::KeyValue& kv_;
};

class LeaseKeeperTest : public gpuaas::testing::NatsServerTest {
 protected:
  void SetUp() override {
    auto b = bus::connect_nats({.url = url()});
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    bus_ = std::move(b).value();
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_TRUE(bus_->delete_kv(name).is_ok());
    auto kv = bus_->open_kv({.bucket = name, .ttl = 1s});
    ASSERT_TRUE(kv.is_ok()) << kv.status().message();
    kv_ = std::move(kv).value();
  }

  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::KeyValue> kv_;
};

TEST_F(LeaseKeeperTest, OneLeadsAndTheOtherTakesOverWhenItStops) {
  LeaderLease la(*kv_, "leader", "a");
  LeaderLease lb(*kv_, "leader", "b");
  std::atomic<uint64_t> b_epoch{0};
  LeaseKeeper a(la, 300ms, 1000ms);
  LeaseKeeper b(lb, 300ms, 1000ms, [&](bool leading, uint64_t epoch) {
    if (leading) b_epoch = epoch;
  });
  a.start();
  ASSERT_TRUE(wait_until([&] { return a.leading(); }, 5s));
  const uint64_t a_epoch = a.epoch();
  EXPECT_GT(a_epoch, 0u);
  b.start();  // standby while a renews (leader_lease_test checks that step by step)

  a.stop();  // dies without releasing
  EXPECT_FALSE(a.leading());
  ASSERT_TRUE(wait_until([&] { return b.leading(); }, 1s + 5s));
  EXPECT_GT(b.epoch(), a_epoch);
  EXPECT_EQ(b_epoch.load(), b.epoch());  // the callback saw the change
}

TEST_F(LeaseKeeperTest, ReleaseHandsOverAtTheNextAttempt) {
  LeaderLease la(*kv_, "leader", "a");
  LeaderLease lb(*kv_, "leader", "b");
  LeaseKeeper a(la, 200ms, 1000ms);
  LeaseKeeper b(lb, 200ms, 1000ms);
  a.start();
  ASSERT_TRUE(wait_until([&] { return a.leading(); }, 5s));
  b.start();
  a.stop();
  ASSERT_TRUE(la.release().is_ok());
  // No TTL to wait for: b's next attempt creates the key. Bounded, not timed.
  ASSERT_TRUE(wait_until([&] { return b.leading(); }, 5s));
  auto cur = kv_->get("leader");
  ASSERT_TRUE(cur.is_ok() && cur->has_value());
  EXPECT_EQ((*cur)->value, "b");
}

// The lease is won by a get answered after 80% of the TTL: renewing a whole period later would
// let it lapse (the leader would step down, and gpuaasd would stop, 2 s after taking over).
TEST_F(LeaseKeeperTest, ALeaseWonBySlowAnswersIsRenewedBeforeItLapses) {
  SlowKv slow(*kv_);
  slow.get_delay_ms = 800;
  LeaderLease la(slow, "leader", "a");
  std::atomic<int> changes{0};
  LeaseKeeper a(la, 300ms, 1000ms, [&](bool, uint64_t) { ++changes; });
  a.start();
  ASSERT_TRUE(wait_until([&] { return a.leading(); }, 5s));
  slow.get_delay_ms = 0;  // renewals are updates: answered at once
  bool held = true;
  for (auto end = Clock::now() + 2500ms; Clock::now() < end && held;) {
    held = a.leading();
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(held) << "the lease lapsed between renewals";
  EXPECT_EQ(changes.load(), 1) << "leading once, never stepping down";
  a.stop();
}

}  // namespace
}  // namespace gpuaas::core::ha
