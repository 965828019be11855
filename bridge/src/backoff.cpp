#include "gpuaas/bridge/backoff.hpp"

#include <algorithm>
#include <thread>

namespace gpuaas::bridge {

Backoff::Backoff(BackoffOptions options, std::uint64_t seed)
    : options_(std::move(options)), state_(seed), base_(options_.initial) {}

double Backoff::uniform() {
  // splitmix64: tiny, seedable, and the same sequence on every platform (std distributions are
  // not).
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

std::chrono::milliseconds Backoff::next() {
  const auto base = base_;
  ++failures_;
  const double grown = static_cast<double>(base_.count()) * options_.factor;
  base_ = std::min(options_.max, std::chrono::milliseconds(static_cast<std::int64_t>(grown)));
  if (options_.jitter <= 0) return base;
  const double jittered = static_cast<double>(base.count()) * (1.0 + options_.jitter * uniform());
  return std::chrono::milliseconds(static_cast<std::int64_t>(jittered));
}

void Backoff::reset() {
  base_ = options_.initial;
  failures_ = 0;
}

void Backoff::wait(std::chrono::milliseconds delay, const std::atomic<bool>& stop) const {
  if (options_.sleep) {
    options_.sleep(delay, stop);
  } else {
    interruptible_sleep(delay, stop);
  }
}

void interruptible_sleep(std::chrono::milliseconds delay, const std::atomic<bool>& stop) {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (!stop.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(20)));
  }
}

}  // namespace gpuaas::bridge
