// The trend of a node pool's GPU demand (what admitted work holds plus what waits for nodes),
// forecast with Holt's linear method so that nodes are asked for one provisioning time before
// the demand gets there. Pure: the samples carry event time; nothing reads a clock.
//
// Samples arrive at irregular times; they are folded into fixed steps (the last value in each
// step counts; a step with no sample repeats the previous value), and each closed step updates
//   level_t = a*y_t + (1-a)*(level_{t-1} + trend_{t-1})
//   trend_t = b*(level_t - level_{t-1}) + (1-b)*trend_{t-1}
// with a = 2/(N+1), N = window/step (the EWMA whose centre of mass is half the window) and b = a.
// forecast(h) = level + trend*h/step, never below zero. Demand in GPUs (milli-units), as doubles.
#pragma once

#include <chrono>
#include <optional>

namespace gpuaas::core::scaleout {

using Millis = std::chrono::milliseconds;
using Time = std::chrono::sys_time<Millis>;

class DemandTrend {
 public:
  explicit DemandTrend(Millis window = std::chrono::minutes(30),
                       Millis step = std::chrono::minutes(1));

  // The demand at event time t (samples older than the last are ignored).
  void observe(Time t, double demand);
  // Expected demand `ahead` after the last closed step; nullopt until two steps have closed.
  std::optional<double> forecast(Millis ahead) const;
  // What the trend adds `ahead`: max(0, trend) * ahead/step, while the demand is still rising
  // (the last closed step above the one two steps before). A falling demand adds nothing, the
  // level's lag behind a fast drop never reads as growth, and a one-off jump (one job arriving)
  // is a new level, not a trend, once it has held for two steps.
  double growth(Millis ahead) const;
  // Per step; 0 until two steps have closed.
  double trend() const { return steps_ >= 2 ? trend_ : 0.0; }
  double level() const { return level_; }

  // Snapshots (gpuaas/base/archive.hpp): every field, the constants from the window included.
  template <typename A>
  friend void archive_fields(A& a, DemandTrend& t) {
    a(t.step_, t.alpha_, t.beta_, t.step_start_, t.last_, t.current_, t.closed_, t.level_, t.trend_,
      t.steps_);
  }

 private:
  void close_step(double y);

  Millis step_;
  double alpha_;
  double beta_;
  std::optional<Time> step_start_;
  std::optional<Time> last_;      // the latest sample's time
  double current_ = 0;            // the last sample in the open step
  double closed_[3] = {0, 0, 0};  // the last three closed steps' values, newest first
  double level_ = 0;
  double trend_ = 0;
  long steps_ = 0;
};

}  // namespace gpuaas::core::scaleout
