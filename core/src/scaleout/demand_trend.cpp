#include "gpuaas/scaleout/demand_trend.hpp"

#include <algorithm>

namespace gpuaas::core::scaleout {

DemandTrend::DemandTrend(Millis window, Millis step) : step_(std::max(step, Millis(1))) {
  const double n =
      std::max(1.0, static_cast<double>(window.count()) / static_cast<double>(step_.count()));
  alpha_ = 2.0 / (n + 1.0);
  beta_ = alpha_;
}

void DemandTrend::close_step(double y) {
  closed_[2] = closed_[1];
  closed_[1] = closed_[0];
  closed_[0] = y;
  if (steps_ == 0) {
    level_ = y;
  } else {
    const double prev = level_;
    level_ = alpha_ * y + (1 - alpha_) * (level_ + trend_);
    // The first difference seeds the trend.
    trend_ = steps_ == 1 ? level_ - prev : beta_ * (level_ - prev) + (1 - beta_) * trend_;
  }
  ++steps_;
}

void DemandTrend::observe(Time t, double demand) {
  if (last_ && t < *last_) return;
  last_ = t;
  if (!step_start_) {
    step_start_ = t;
    current_ = demand;
    return;
  }
  if (t < *step_start_) return;
  // Close every step that ended before t; empty steps repeat the last value. A long gap is
  // capped so that one sample after hours costs a bounded number of updates.
  long closed = 0;
  while (t >= *step_start_ + step_ && closed < 1000) {
    close_step(current_);
    *step_start_ += step_;
    ++closed;
  }
  if (t >= *step_start_ + step_) *step_start_ = t;  // past the cap: restart the step here
  current_ = demand;
}

double DemandTrend::growth(Millis ahead) const {
  if (steps_ < 3 || trend_ <= 0 || closed_[0] <= closed_[2]) return 0;
  return trend_ * static_cast<double>(ahead.count()) / static_cast<double>(step_.count());
}

std::optional<double> DemandTrend::forecast(Millis ahead) const {
  if (steps_ < 2) return std::nullopt;
  const double h = static_cast<double>(ahead.count()) / static_cast<double>(step_.count());
  return std::max(0.0, level_ + trend_ * h);
}

}  // namespace gpuaas::core::scaleout
