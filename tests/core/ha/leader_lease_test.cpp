// The leader lease over a real nats-server's KV bucket (and the in-process bus): one leader, a
// standby that takes over when the leader stops renewing or releases, epochs that only grow.
#include "ha/leader_lease.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core::ha {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kTtl = 2s;  // two adjacent calls do not straddle an expiry on a busy machine

class LeaderLeaseTest : public gpuaas::testing::NatsServerTest,
                        public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "memory") {
      bus_ = bus::make_memory_bus();
    } else {
      bus::NatsOptions o;
      o.url = url();
      auto b = bus::connect_nats(o);
      ASSERT_TRUE(b.is_ok()) << b.status().message();
      bus_ = std::move(b).value();
    }
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    ASSERT_TRUE(bus_->delete_kv(name).is_ok());
    auto kv = bus_->open_kv({.bucket = name, .ttl = kTtl});
    ASSERT_TRUE(kv.is_ok()) << kv.status().message();
    kv_ = std::move(kv).value();
  }

  static LeaseState step(LeaderLease& lease) {
    auto s = lease.try_acquire_or_renew();
    EXPECT_TRUE(s.is_ok()) << lease.holder_id() << ": " << s.status().message();
    return s.is_ok() ? *s : LeaseState{};
  }

  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::KeyValue> kv_;
};

TEST_P(LeaderLeaseTest, ExactlyOneOfTwoLeads) {
  LeaderLease a(*kv_, "leader", "a");
  LeaderLease b(*kv_, "leader", "b");
  LeaseState sa = step(a);
  LeaseState sb = step(b);
  ASSERT_TRUE(sa.leader);
  EXPECT_GT(sa.epoch, 0u);
  EXPECT_EQ(sa.holder, "a");
  EXPECT_FALSE(sb.leader);
  EXPECT_EQ(sb.epoch, 0u);
  EXPECT_EQ(sb.holder, "a");
  // Renewals keep the epoch and move the revision; the standby stays standby meanwhile.
  for (int i = 0; i < 3; ++i) {
    LeaseState renewed = step(a);
    EXPECT_TRUE(renewed.leader);
    EXPECT_EQ(renewed.epoch, sa.epoch);
    EXPECT_GT(renewed.revision, sa.revision);
    sa = renewed;
    EXPECT_FALSE(step(b).leader);
  }
}

TEST_P(LeaderLeaseTest, StandbyTakesOverWhenTheLeaderStopsRenewing) {
  LeaderLease a(*kv_, "leader", "a");
  LeaderLease b(*kv_, "leader", "b");
  const LeaseState first = step(a);
  ASSERT_TRUE(first.leader);
  ASSERT_FALSE(step(b).leader);
  // a dies (stops renewing). b polls at a tenth of the TTL; the server's own timer expires the
  // key, so the wait is bounded (TTL + a margin) and nothing is asserted about its length.
  const auto died = Clock::now();
  LeaseState sb;
  for (auto deadline = died + kTtl + 5s; Clock::now() < deadline;) {
    sb = step(b);
    if (sb.leader) break;
    std::this_thread::sleep_for(kTtl / 10);
  }
  ASSERT_TRUE(sb.leader) << "b did not take over within the TTL and 5 s";
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - died);
  std::cout << "[ takeover ] " << GetParam() << ": " << took.count() << " ms after the last renew"
            << " (bucket TTL " << std::chrono::milliseconds(kTtl).count() << " ms)\n";
  RecordProperty("takeover_ms", static_cast<int>(took.count()));
  EXPECT_GT(sb.epoch, first.epoch);
  EXPECT_EQ(sb.holder, "b");

  // The stale leader comes back: its renewal loses the compare-and-set and it learns who leads.
  LeaseState sa = step(a);
  EXPECT_FALSE(sa.leader);
  EXPECT_EQ(sa.epoch, 0u);
  EXPECT_EQ(sa.holder, "b");
  // Its release must not delete b's lease.
  ASSERT_TRUE(a.release().is_ok());
  LeaseState still = step(b);
  EXPECT_TRUE(still.leader);
  EXPECT_EQ(still.epoch, sb.epoch);
}

TEST_P(LeaderLeaseTest, StaleLeaderWhoseRenewLosesIsStandby) {
  LeaderLease a(*kv_, "leader", "a");
  ASSERT_TRUE(step(a).leader);
  // Someone else overwrote the key (after an expiry a did not notice, say).
  auto cur = kv_->get("leader");
  ASSERT_TRUE(cur.is_ok() && cur->has_value());
  ASSERT_TRUE(kv_->update("leader", "c", (*cur)->revision).is_ok());
  LeaseState sa = step(a);
  EXPECT_FALSE(sa.leader);
  EXPECT_EQ(sa.holder, "c");
  EXPECT_FALSE(a.state().leader);
}

TEST_P(LeaderLeaseTest, ReleaseHandsOverAtOnceAndEpochsIncrease) {
  LeaderLease a(*kv_, "leader", "a");
  LeaderLease b(*kv_, "leader", "b");
  uint64_t last_epoch = 0;
  LeaderLease* leader = &a;
  LeaderLease* standby = &b;
  ASSERT_TRUE(step(a).leader);
  last_epoch = a.state().epoch;
  for (int round = 0; round < 4; ++round) {
    ASSERT_FALSE(step(*standby).leader);
    ASSERT_TRUE(leader->release().is_ok());
    EXPECT_FALSE(leader->state().leader);
    // One attempt suffices: the key is gone, not waiting for the TTL.
    LeaseState now = step(*standby);
    ASSERT_TRUE(now.leader) << "round " << round;
    EXPECT_GT(now.epoch, last_epoch);
    last_epoch = now.epoch;
    std::swap(leader, standby);
  }
  // Releasing as standby is a no-op.
  EXPECT_TRUE(standby->release().is_ok());
  EXPECT_TRUE(step(*leader).leader);
}

TEST_P(LeaderLeaseTest, SameHolderAfterARestartLeadsWithANewEpoch) {
  LeaderLease before(*kv_, "leader", "a");
  const LeaseState first = step(before);
  ASSERT_TRUE(first.leader);
  // A new LeaderLease with the same id (its state lost): the key is its own, taken over at once.
  LeaderLease after(*kv_, "leader", "a");
  const LeaseState second = step(after);
  EXPECT_TRUE(second.leader);
  EXPECT_GT(second.epoch, first.epoch);
  // The old object's renew loses the compare-and-set; the key still says "a", so it takes it
  // back (one id is one holder), again with a newer epoch: epochs never repeat.
  const LeaseState third = step(before);
  EXPECT_TRUE(third.leader);
  EXPECT_GT(third.epoch, second.epoch);
}

INSTANTIATE_TEST_SUITE_P(Buses, LeaderLeaseTest, ::testing::Values("memory", "nats"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
}  // namespace gpuaas::core::ha
