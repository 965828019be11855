// The reflector's backoff: 800 ms doubling to a 30 s cap, jitter factor 1.0 (each delay in
// [base, 2*base)), deterministic for a seed, reset after a healthy period, and a wait that a stop
// flag ends.
#include "gpuaas/bridge/backoff.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpuaas::bridge {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, WithoutJitterDoublesFrom800msToThe30sCap) {
  BackoffOptions options;
  options.jitter = 0;
  Backoff b(options);
  std::vector<long> got;
  for (int i = 0; i < 9; ++i) got.push_back(static_cast<long>(b.next().count()));
  EXPECT_EQ(got, (std::vector<long>{800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000}));
  EXPECT_EQ(b.failures(), 9);
  b.reset();
  EXPECT_EQ(b.next(), milliseconds(800));
}

TEST(Backoff, JitterStaysWithinBaseAndTwiceBase) {
  Backoff b({}, 42);
  const long bases[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 30000};
  bool any_jitter = false;
  for (const long base : bases) {
    const long d = static_cast<long>(b.next().count());
    EXPECT_GE(d, base);
    EXPECT_LT(d, 2 * base);
    any_jitter = any_jitter || d != base;
  }
  EXPECT_TRUE(any_jitter);
}

TEST(Backoff, SameSeedSameDelaysOtherSeedOthers) {
  Backoff a({}, 7), b({}, 7), c({}, 8);
  std::vector<long> da, db, dc;
  for (int i = 0; i < 6; ++i) {
    da.push_back(static_cast<long>(a.next().count()));
    db.push_back(static_cast<long>(b.next().count()));
    dc.push_back(static_cast<long>(c.next().count()));
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

TEST(Backoff, WaitUsesTheInjectedSleeper) {
  std::vector<milliseconds> slept;
  BackoffOptions options;
  options.sleep = [&](milliseconds d, const std::atomic<bool>&) { slept.push_back(d); };
  Backoff b(options, 1);
  std::atomic<bool> stop{false};
  b.wait(b.next(), stop);
  ASSERT_EQ(slept.size(), 1u);
  EXPECT_GE(slept[0], milliseconds(800));
}

TEST(Backoff, DefaultWaitReturnsAtOnceWhenStopped) {
  Backoff b;
  std::atomic<bool> stop{true};
  const auto start = std::chrono::steady_clock::now();
  b.wait(milliseconds(30000), stop);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
}

}  // namespace
}  // namespace gpuaas::bridge
