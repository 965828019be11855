// Paces a LeaderLease on a thread of its own and applies the step-down rule: this process leads
// only while its last successful renewal is younger than the TTL, because after that a standby
// may hold the key even if this process could not hear about it. Wall-clock pacing is
// infrastructure here; decisions still read event time only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "leader_lease.hpp"

namespace gpuaas::core::ha {

class LeaseKeeper {
 public:
  // Called on the keeper's thread whenever leading() or the epoch changes.
  using OnChange = std::function<void(bool leading, uint64_t epoch)>;

  // period: time between attempts (TTL/3 is a good choice); ttl: the bucket's TTL.
  LeaseKeeper(LeaderLease& lease, std::chrono::milliseconds period, std::chrono::milliseconds ttl,
              OnChange on_change = {});
  ~LeaseKeeper();  // stop(); the lease is not released
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  void start();
  // Stops attempting. Call lease.release() afterwards for a clean hand-over.
  void stop();

  bool leading() const;
  uint64_t epoch() const;  // 0 when not leading

 private:
  void loop();
  std::chrono::milliseconds next_wait() const;

  LeaderLease& lease_;
  std::chrono::milliseconds period_;
  std::chrono::milliseconds ttl_;
  OnChange on_change_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool leading_ = false;
  uint64_t epoch_ = 0;
  std::chrono::steady_clock::time_point renewed_at_{};
  std::thread thread_;
};

}  // namespace gpuaas::core::ha
