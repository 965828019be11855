#include "gpuaas/bridge/write_budget.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

namespace gpuaas::bridge {
namespace {

class SteadyClock final : public MonotonicClock {
 public:
  std::chrono::nanoseconds now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
  }
  void sleep_for(std::chrono::nanoseconds d) override { std::this_thread::sleep_for(d); }
};

// Short enough that a stopping bridge is not held up by a long wait.
constexpr std::chrono::milliseconds kSlice{50};

}  // namespace

MonotonicClock& steady_monotonic_clock() {
  static SteadyClock clock;
  return clock;
}

WriteBudget::WriteBudget(WriteBudgetOptions options, MonotonicClock& clock)
    : options_(options), clock_(clock) {
  if (!(options_.qps > 0)) options_.qps = 1e-3;
  options_.burst = std::max(options_.burst, 1);
  tokens_ = options_.burst;
  last_ = clock_.now();
}

void WriteBudget::refill(std::chrono::nanoseconds now) const {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(static_cast<double>(options_.burst), tokens_ + elapsed * options_.qps);
  last_ = now;
}

std::chrono::nanoseconds WriteBudget::reserve() {
  std::lock_guard lock(mutex_);
  refill(clock_.now());
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(static_cast<int64_t>(std::ceil(-tokens_ / options_.qps * 1e9)));
}

std::chrono::nanoseconds WriteBudget::acquire(const std::atomic<bool>& stop) {
  const auto wait = reserve();
  if (wait.count() == 0) return wait;
  const auto start = clock_.now();
  const auto until = start + wait;
  for (auto now = start; now < until && !stop.load(); now = clock_.now()) {
    clock_.sleep_for(std::min<std::chrono::nanoseconds>(until - now, kSlice));
  }
  return clock_.now() - start;
}

double WriteBudget::tokens() const {
  std::lock_guard lock(mutex_);
  refill(clock_.now());
  return tokens_;
}

}  // namespace gpuaas::bridge
