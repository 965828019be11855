#include "gpuaas/capacity/demand_forecast.hpp"

#include <algorithm>
#include <cmath>

namespace gpuaas::capacity {

namespace {

// The weight of a new observation `dt` seconds after the last, for a half life: 1/2 after one.
double weight(double dt, double half_life) {
  if (half_life <= 0) return 1;
  return 1 - std::exp2(-dt / half_life);
}

}  // namespace

void DemandForecast::observe(double t, double rate) {
  rate = std::max(0.0, rate);
  if (n_ == 0) {
    level_ = rate;
    last_t_ = t;
    n_ = 1;
    return;
  }
  const double dt = t - last_t_;
  if (!(dt > 0)) return;
  const double previous = level_;
  const double a = weight(dt, s_.level_half_life);
  const double phi = s_.trend_damping > 0 ? std::exp2(-dt / s_.trend_damping) : 1;
  level_ = a * rate + (1 - a) * (level_ + trend_ * phi * dt);
  const double slope = (level_ - previous) / dt;
  // The first slope is taken whole: before it there is no trend to average with.
  const double b = n_ == 1 ? 1 : weight(dt, s_.trend_half_life);
  trend_ = b * slope + (1 - b) * trend_ * phi;
  last_t_ = t;
  ++n_;
}

double DemandForecast::forecast(double ahead) const {
  ahead = std::max(0.0, ahead);
  // The trend fading as it goes: its integral over `ahead`.
  const double span = s_.trend_damping > 0 ? s_.trend_damping / std::log(2.0) *
                                                 (1 - std::exp2(-ahead / s_.trend_damping))
                                           : ahead;
  return std::max(0.0, level_ + (ready() ? trend_ : 0) * span);
}

}  // namespace gpuaas::capacity
