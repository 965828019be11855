#include "lease_keeper.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpuaas::core::ha {

using Clock = std::chrono::steady_clock;

LeaseKeeper::LeaseKeeper(LeaderLease& lease, std::chrono::milliseconds period,
                         std::chrono::milliseconds ttl, OnChange on_change)
    : lease_(lease), period_(period), ttl_(ttl), on_change_(std::move(on_change)) {}

LeaseKeeper::~LeaseKeeper() { stop(); }

void LeaseKeeper::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void LeaseKeeper::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  leading_ = false;
  epoch_ = 0;
}

bool LeaseKeeper::leading() const {
  std::lock_guard lock(mu_);
  return leading_ && Clock::now() - renewed_at_ < ttl_;
}

uint64_t LeaseKeeper::epoch() const {
  std::lock_guard lock(mu_);
  return leading_ && Clock::now() - renewed_at_ < ttl_ ? epoch_ : 0;
}

// A renewal counts from when it was sent, so a slow one (an overloaded server answering after
// most of the TTL) leaves little of the lease: the next attempt comes while a third of what is
// left remains, not a whole period later when the lease may have lapsed. Called with mu_ held.
std::chrono::milliseconds LeaseKeeper::next_wait() const {
  if (!leading_) return period_;
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(renewed_at_ + ttl_ - Clock::now());
  return std::clamp(left / 3, std::chrono::milliseconds(1), period_);
}

void LeaseKeeper::loop() {
  int failures = 0;
  while (true) {
    const auto attempted_at = Clock::now();
    auto state = lease_.try_acquire_or_renew();
    bool leading = false;
    uint64_t epoch = 0;
    {
      std::unique_lock lock(mu_);
      if (state) {
        failures = 0;
        leading = state->leader;
        epoch = state->epoch;
        // The renewal counts from when it was sent: the server's TTL started no earlier.
        if (leading) renewed_at_ = attempted_at;
      } else {
        if (failures++ == 0) spdlog::warn("leader lease: {}", state.status().message());
        // Unreachable server: keep leading only while the last renewal is younger than the TTL.
        leading = leading_ && Clock::now() - renewed_at_ < ttl_;
        epoch = leading ? epoch_ : 0;
      }
      const bool changed = leading != leading_ || epoch != epoch_;
      leading_ = leading;
      epoch_ = epoch;
      if (changed && on_change_) {
        lock.unlock();
        on_change_(leading, epoch);
        lock.lock();
      }
      if (cv_.wait_for(lock, next_wait(), [this] { return stopping_; })) return;
    }
  }
}

}  // namespace gpuaas::core::ha
