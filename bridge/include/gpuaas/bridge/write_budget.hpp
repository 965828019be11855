// The bridge's budget for writes to the API server, as client-go's client-side rate limiter: a
// token bucket of `burst` tokens refilled at `qps` per second; each write (patch, create, delete,
// event, scale) takes one and waits for it when the bucket is empty. Reads and watches are not
// limited. Waiters are served in arrival order: each reserves its token when it asks.
//
// The bucket reads a monotonic clock the bridge owns, not event time: the bridge applies actions
// in real time and paces its own requests; nothing here is a decision. The clock is injected, so
// tests run the bucket on a fake clock without sleeping.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>

namespace gpuaas::bridge {

class MonotonicClock {
 public:
  virtual ~MonotonicClock() = default;
  // Time since an arbitrary origin; never goes back.
  virtual std::chrono::nanoseconds now() const = 0;
  // Waits `d` (a fake clock advances by it instead).
  virtual void sleep_for(std::chrono::nanoseconds d) = 0;
};

// std::chrono::steady_clock and std::this_thread::sleep_for.
MonotonicClock& steady_monotonic_clock();

struct WriteBudgetOptions {
  double qps = 20;  // tokens added per second (client-go's rest.Config QPS)
  int burst = 40;   // the bucket's size, and the tokens it starts with (rest.Config Burst)
};

class WriteBudget {
 public:
  // `clock` must outlive the budget. qps <= 0 or burst < 1 are raised to the smallest useful
  // values (the configuration refuses them before they get here).
  explicit WriteBudget(WriteBudgetOptions options = {},
                       MonotonicClock& clock = steady_monotonic_clock());

  // Takes a token now and says how long the caller must wait before writing (0: one was there).
  // Never sleeps.
  std::chrono::nanoseconds reserve();
  // reserve(), then waits that long in short slices, giving up when `stop` is set. Returns the
  // time waited.
  std::chrono::nanoseconds acquire(const std::atomic<bool>& stop);

  // Tokens in the bucket at the clock's now (negative: owed to waiters).
  double tokens() const;
  const WriteBudgetOptions& options() const { return options_; }

 private:
  void refill(std::chrono::nanoseconds now) const;

  WriteBudgetOptions options_;
  MonotonicClock& clock_;
  mutable std::mutex mutex_;
  mutable double tokens_;
  mutable std::chrono::nanoseconds last_;
};

}  // namespace gpuaas::bridge
