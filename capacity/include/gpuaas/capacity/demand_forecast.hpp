// A service's request rate ahead of now, to size its replicas before the demand arrives: Holt's
// linear exponential smoothing (a level and a trend, each an exponentially weighted average) with
// Gardner's damped trend (the trend fades with its own half life, so a ramp that ended is not
// carried on for long: undamped, a ramp's trend kept the forecast 15% high for ten minutes after
// it) over the rates of closed windows, which come at irregular event times. Each weight is set
// by a half life, so the forecast reads the same whatever the scrape interval. It reads no clock.
#pragma once

namespace gpuaas::capacity {

struct ForecastSettings {
  double level_half_life = 30;   // seconds: how fast the level follows a new rate
  double trend_half_life = 120;  // seconds: how fast the trend follows a change of slope
  double trend_damping = 300;    // seconds: the trend's own half life (0: undamped)
};

class DemandForecast {
 public:
  explicit DemandForecast(ForecastSettings s = {}) : s_(s) {}

  // The rate (requests per second) of a window that ended at `t` (seconds, event time). One at
  // or before the last is ignored: windows arrive in order, a replay repeats none.
  void observe(double t, double rate);
  bool ready() const { return n_ >= 2; }  // a trend needs two windows
  double level() const { return level_; }
  double trend() const { return trend_; }  // requests per second, per second
  // The rate `ahead` seconds after the last window: the level plus the damped trend over
  // `ahead` (trend x ahead when undamped), never below 0.
  double forecast(double ahead) const;

 private:
  ForecastSettings s_;
  double level_ = 0, trend_ = 0, last_t_ = 0;
  int n_ = 0;
};

}  // namespace gpuaas::capacity
