// Retry delays as client-go's reflector has them (wait.NewExponentialBackoffManager(800ms, 30s,
// 2m, 2.0, 1.0)): the base delay starts at 800 ms and doubles per failure up to 30 s; each delay
// is jittered to base * (1 + jitter * u), u uniform in [0, 1), so many bridges restarted together
// do not hammer the API server in step. The random source is seeded, so tests are deterministic.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace gpuaas::bridge {

struct BackoffOptions {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds max{30000};  // cap of the base delay (before jitter)
  double factor = 2.0;
  double jitter = 1.0;
  // How a delay is waited for; it must return early once `stop` is set. Empty: sleep in short
  // slices checking `stop`. Tests put a recorder here and never sleep.
  std::function<void(std::chrono::milliseconds, const std::atomic<bool>& stop)> sleep;
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}, std::uint64_t seed = 0);

  // The delay before the next try, and one more failure counted.
  std::chrono::milliseconds next();
  // A healthy period: the next failure starts from `initial` again.
  void reset();
  int failures() const { return failures_; }
  // Waits for `delay` with options.sleep (or the default), returning early when stop is set.
  void wait(std::chrono::milliseconds delay, const std::atomic<bool>& stop) const;

  const BackoffOptions& options() const { return options_; }

 private:
  double uniform();  // [0, 1)

  BackoffOptions options_;
  std::uint64_t state_;
  std::chrono::milliseconds base_;
  int failures_ = 0;
};

// Sleeps up to `delay` in short slices, returning as soon as `stop` is set.
void interruptible_sleep(std::chrono::milliseconds delay, const std::atomic<bool>& stop);

}  // namespace gpuaas::bridge
