// DemandTrend: Holt's linear trend over event-time samples folded into fixed steps. The known
// answers below are worked by hand from the recurrences in demand_trend.hpp:
//   level_t = a*y_t + (1-a)*(level_{t-1} + trend_{t-1})
//   trend_t = b*(level_t - level_{t-1}) + (1-b)*trend_{t-1}   (trend_1 = level_1 - level_0)
// with a = b = 2/(N+1), N = window/step.
#include "gpuaas/scaleout/demand_trend.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>

namespace gpuaas::core::scaleout {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const Time kT0 = Time{std::chrono::sys_days{std::chrono::year{2026} / 1 / 1}} + hours(12);

TEST(DemandTrend, NoForecastBeforeTwoClosedSteps) {
  DemandTrend trend;  // window 30 min, step 1 min
  EXPECT_FALSE(trend.forecast(minutes(10)).has_value());
  trend.observe(kT0, 5000);  // opens step 0
  EXPECT_FALSE(trend.forecast(minutes(10)).has_value());
  trend.observe(kT0 + seconds(59), 5000);  // still step 0
  EXPECT_FALSE(trend.forecast(minutes(10)).has_value());
  trend.observe(kT0 + minutes(1), 5000);  // closes step 0: one step
  EXPECT_FALSE(trend.forecast(minutes(10)).has_value());
  EXPECT_EQ(trend.trend(), 0.0);
  trend.observe(kT0 + minutes(2), 5000);  // closes step 1: two steps
  ASSERT_TRUE(trend.forecast(minutes(10)).has_value());
  EXPECT_NEAR(*trend.forecast(minutes(10)), 5000.0, 1e-9);
}

TEST(DemandTrend, FlatSeriesForecastsTheLevel) {
  DemandTrend trend;
  // 12000 milli every 10 s for 20 minutes (closes 20 steps).
  for (int i = 0; i <= 20 * 6; ++i) trend.observe(kT0 + seconds(10 * i), 12000);
  EXPECT_NEAR(trend.level(), 12000.0, 1e-6);
  EXPECT_NEAR(trend.trend(), 0.0, 1e-6);
  ASSERT_TRUE(trend.forecast(minutes(10)).has_value());
  EXPECT_NEAR(*trend.forecast(minutes(10)), 12000.0, 1e-6);
  EXPECT_NEAR(*trend.forecast(hours(5)), 12000.0, 1e-6);
}

TEST(DemandTrend, LinearRampSeedsTheTrendWithTheFirstDifference) {
  DemandTrend trend;  // a = 2/31
  // +8000 milli per minute sampled every 10 s: the last sample of step k (at k min + 50 s) is
  // y_k = 8000k + 6666.67. After two steps: level_1 = y_0 + a*8000, trend_1 = a*8000 = 16000/31.
  for (int i = 0; i <= 2 * 6; ++i) trend.observe(kT0 + seconds(10 * i), 8000.0 * i / 6.0);
  const double y0 = 8000.0 * 5 / 6;
  EXPECT_NEAR(trend.level(), y0 + 16000.0 / 31.0, 1e-6);
  EXPECT_NEAR(trend.trend(), 16000.0 / 31.0, 1e-6);
  ASSERT_TRUE(trend.forecast(minutes(10)).has_value());
  EXPECT_NEAR(*trend.forecast(minutes(10)), y0 + 11 * 16000.0 / 31.0, 1e-6);
}

TEST(DemandTrend, LinearRampForecastsAheadOfTheLevel) {
  DemandTrend trend;
  // Three hours of the same ramp: 180 closed steps, the last at y_179 = 8000*179 + 6666.67.
  // Holt's method follows a linear series exactly in the limit (trend -> 8000 per step,
  // level -> y_t); after 180 steps it is within a fraction of a percent (8021.5 and
  // 1438876 worked out step by step), so the forecast 10 min ahead is close to
  // y_179 + 10*8000 = 1518666.67 and far above the level.
  for (int i = 0; i <= 180 * 6; ++i) trend.observe(kT0 + seconds(10 * i), 8000.0 * i / 6.0);
  const double last = 8000.0 * 179 + 8000.0 * 5 / 6;
  EXPECT_GT(trend.trend(), 0.0);
  EXPECT_NEAR(trend.trend(), 8000.0, 8000.0 * 0.02);
  EXPECT_NEAR(trend.level(), last, last * 0.002);
  const auto ahead = trend.forecast(minutes(10));
  ASSERT_TRUE(ahead.has_value());
  EXPECT_NEAR(*ahead, last + 80000.0, (last + 80000.0) * 0.005);
  EXPECT_GT(*ahead, trend.level() + 70000.0);
  // The forecast scales with the horizon: h is measured in steps.
  EXPECT_NEAR(*trend.forecast(minutes(20)) - *ahead, 10 * trend.trend(), 1e-6);
}

TEST(DemandTrend, EmptyStepsRepeatTheLastValue) {
  // Window 3 min, step 1 min: N = 3, a = b = 0.5.
  DemandTrend trend(minutes(3), minutes(1));
  trend.observe(kT0, 0);
  trend.observe(kT0 + minutes(1), 100);  // closes y=0: level 0
  trend.observe(kT0 + minutes(2), 200);  // closes y=100: level 50, trend 50 (seed)
  EXPECT_NEAR(trend.level(), 50.0, 1e-9);
  EXPECT_NEAR(trend.trend(), 50.0, 1e-9);
  EXPECT_NEAR(*trend.forecast(minutes(1)), 100.0, 1e-9);
  // Nothing until 5 min: the steps [2,3) [3,4) [4,5) all close with 200.
  //   y=200: level = 100 + 0.5*(50+50)      = 150,     trend = 0.5*100  + 0.5*50    = 75
  //   y=200: level = 100 + 0.5*(150+75)     = 212.5,   trend = 0.5*62.5 + 0.5*75    = 68.75
  //   y=200: level = 100 + 0.5*(212.5+68.75) = 240.625, trend = 0.5*28.125 + 0.5*68.75 = 48.4375
  trend.observe(kT0 + minutes(5), 999);
  EXPECT_NEAR(trend.level(), 240.625, 1e-9);
  EXPECT_NEAR(trend.trend(), 48.4375, 1e-9);
  // 999 is in the open step and not folded in yet.
  EXPECT_NEAR(*trend.forecast(minutes(2)), 240.625 + 2 * 48.4375, 1e-9);
}

TEST(DemandTrend, SamplesBeforeTheOpenStepAreIgnored) {
  DemandTrend trend(minutes(3), minutes(1));  // a = 0.5
  trend.observe(kT0, 100);
  trend.observe(kT0 + minutes(1), 100);
  trend.observe(kT0 + minutes(2), 100);                  // level 100, trend 0; step [2,3) open
  trend.observe(kT0 + seconds(30), 50000);               // older than the open step: ignored
  trend.observe(kT0 + minutes(1) + seconds(59), 50000);  // likewise
  trend.observe(kT0 + minutes(3), 100);                  // closes [2,3) with 100
  EXPECT_NEAR(trend.level(), 100.0, 1e-9);
  EXPECT_NEAR(trend.trend(), 0.0, 1e-9);
}

// A sample older than the last one is ignored, even inside the open step.
TEST(DemandTrend, SampleOlderThanTheLastInsideTheOpenStepIsIgnored) {
  DemandTrend trend(minutes(3), minutes(1));
  trend.observe(kT0, 100);
  trend.observe(kT0 + minutes(1), 100);
  trend.observe(kT0 + minutes(2), 100);
  trend.observe(kT0 + minutes(2) + seconds(50), 100);
  trend.observe(kT0 + minutes(2) + seconds(20), 50000);  // older than the last: ignored
  trend.observe(kT0 + minutes(3), 100);
  EXPECT_NEAR(trend.level(), 100.0, 1e-9);
}

TEST(DemandTrend, LongGapIsBoundedAndRepeatsTheLastValue) {
  DemandTrend trend(minutes(3), minutes(1));  // a = 0.5
  trend.observe(kT0, 1000);
  trend.observe(kT0 + minutes(1), 1000);
  trend.observe(kT0 + minutes(2), 1000);  // level 1000, trend 0
  // Ten years later: at most 1000 steps are closed (all with 1000), then the step restarts at
  // the sample.
  const Time late = kT0 + hours(24 * 365 * 10);
  trend.observe(late, 2000);
  EXPECT_NEAR(trend.level(), 1000.0, 1e-9);
  EXPECT_NEAR(trend.trend(), 0.0, 1e-9);
  EXPECT_NEAR(*trend.forecast(minutes(10)), 1000.0, 1e-9);
  // The step restarted at `late`: one minute later exactly one step closes, with 2000:
  //   level = 0.5*2000 + 0.5*(1000+0) = 1500, trend = 0.5*500 + 0.5*0 = 250.
  trend.observe(late + minutes(1), 2000);
  EXPECT_NEAR(trend.level(), 1500.0, 1e-9);
  EXPECT_NEAR(trend.trend(), 250.0, 1e-9);
}

TEST(DemandTrend, ForecastNeverNegativeOnAFallingSeries) {
  DemandTrend trend(minutes(3), minutes(1));  // a = 0.5
  trend.observe(kT0, 10000);
  trend.observe(kT0 + minutes(1), 5000);  // closes 10000: level 10000
  trend.observe(kT0 + minutes(2), 0);     // closes 5000: level 7500, trend -2500
  EXPECT_NEAR(trend.level(), 7500.0, 1e-9);
  EXPECT_NEAR(trend.trend(), -2500.0, 1e-9);
  EXPECT_NEAR(*trend.forecast(minutes(1)), 5000.0, 1e-9);
  // 7500 - 10*2500 < 0: clamped.
  EXPECT_EQ(*trend.forecast(minutes(10)), 0.0);
  for (int i = 3; i < 30; ++i) {
    trend.observe(kT0 + minutes(i), 0);
    EXPECT_GE(*trend.forecast(minutes(10)), 0.0);
  }
}

}  // namespace
}  // namespace gpuaas::core::scaleout
