// Replicas from capacity, the pure parts: the demand forecast (Holt's level and trend over
// windows at irregular event times) and the bounds it gives with a sustainable rate per replica,
// headroom and the quota's cap.
#include <gtest/gtest.h>

#include "gpuaas/capacity/demand_forecast.hpp"
#include "gpuaas/capacity/replica_sizing.hpp"

namespace gpuaas::capacity {
namespace {

TEST(DemandForecast, ASteadyRateForecastsItself) {
  DemandForecast f;
  EXPECT_FALSE(f.ready());
  for (int t = 0; t <= 600; t += 15) f.observe(t, 20);
  EXPECT_TRUE(f.ready());
  EXPECT_NEAR(f.level(), 20, 1e-9);
  EXPECT_NEAR(f.trend(), 0, 1e-9);
  EXPECT_NEAR(f.forecast(120), 20, 1e-9);
}

TEST(DemandForecast, ARampIsForecastAhead) {
  // 0.05 req/s more each second (3 a minute), windows every 10 s for 20 minutes.
  DemandForecast f;
  for (int t = 0; t <= 1200; t += 10) f.observe(t, 5 + 0.05 * t);
  EXPECT_NEAR(f.trend(), 0.05, 0.02);
  const double now = 5 + 0.05 * 1200;   // 65
  EXPECT_GT(f.forecast(120), now + 2);  // two minutes ahead: 71 undamped, about 68 damped
  EXPECT_LT(f.forecast(120), now + 6);
  EXPECT_GT(f.forecast(120), f.level());
  // Undamped, the trend is carried whole.
  DemandForecast linear({.trend_damping = 0});
  for (int t = 0; t <= 1200; t += 10) linear.observe(t, 5 + 0.05 * t);
  EXPECT_NEAR(linear.forecast(120), now + 6, 1.5);
}

TEST(DemandForecast, ARampThatEndedIsNotCarriedOnForLong) {
  // 0 to 30 req/s in two minutes, then steady: damped, the forecast is back within 5% of the
  // rate five minutes later; undamped (with the slower weights it once had) still 10% high.
  DemandForecast damped,
      linear({.level_half_life = 60, .trend_half_life = 300, .trend_damping = 0});
  int t = 0;
  for (double r : {0.0, 4.0, 12.0, 20.0, 30.0}) {
    for (int i = 0; i < 3; ++i, t += 30) {
      damped.observe(t, r);
      linear.observe(t, r);
    }
  }
  for (int end = t + 300; t <= end; t += 30) {
    damped.observe(t, 30);
    linear.observe(t, 30);
  }
  EXPECT_NEAR(damped.forecast(60), 30, 1.5);
  EXPECT_GT(linear.forecast(60), 33);
}

TEST(DemandForecast, IrregularWindowsWeighByTime) {
  // The same steps at 10 s or 30 s windows end at about the same level: weights follow time.
  DemandForecast fine, coarse;
  for (int t = 0; t <= 300; t += 10) fine.observe(t, t < 150 ? 10 : 30);
  for (int t = 0; t <= 300; t += 30) coarse.observe(t, t < 150 ? 10 : 30);
  EXPECT_NEAR(fine.level(), coarse.level(), 2.0);
  // Out of order or repeated windows are ignored; the forecast is never negative.
  const double before = fine.level();
  fine.observe(100, 1000);
  fine.observe(300, 1000);
  EXPECT_EQ(fine.level(), before);
  DemandForecast falling;
  for (int t = 0; t <= 300; t += 10) falling.observe(t, 300 - t);
  EXPECT_EQ(falling.forecast(3600), 0);
}

TEST(ReplicaSizing, TheForecastOverTheTargetWithinTheQuota) {
  SizingInput in;
  in.observed_rps = 34;
  in.forecast_rps = 41;
  in.per_replica_rps = 12;
  in.headroom = 0.15;
  in.max_by_quota = 8;
  in.objective = "p95 TTFT 400ms";
  const Sizing s = size_replicas(in);
  EXPECT_NEAR(s.scale_target, 10.2, 1e-9);
  EXPECT_EQ(s.needed, 5);  // 41 / 10.2 = 4.02
  EXPECT_EQ(s.min_replicas, 5);
  EXPECT_EQ(s.max_replicas, 8);
  EXPECT_FALSE(s.capped);
  EXPECT_EQ(s.why,
            "demand 34 req/s, forecast 41, 12 req/s per replica at p95 TTFT 400ms: target 10.2, "
            "min 5, max 8 by quota");
}

TEST(ReplicaSizing, AboveTheNeedBurstRoomWithinTheQuota) {
  SizingInput in;
  in.forecast_rps = 10;
  in.per_replica_rps = 10;
  in.headroom = 0;
  in.max_by_quota = 100;  // far above the need: the ceiling is the burst room, 4 x 1 + 4
  Sizing s = size_replicas(in);
  EXPECT_EQ(s.max_replicas, 8);
  EXPECT_NE(s.why.find("max 8 (burst room)"), std::string::npos) << s.why;
  in.max_by_quota = 6;  // below it: the quota
  EXPECT_EQ(size_replicas(in).max_replicas, 6);
  in.max_by_quota = -1;  // no quota known: the burst room
  EXPECT_EQ(size_replicas(in).max_replicas, 8);
}

TEST(ReplicaSizing, CappedWhenTheQuotaEnds) {
  SizingInput in;
  in.observed_rps = 34;
  in.forecast_rps = 41;
  in.per_replica_rps = 12;
  in.headroom = 0.15;
  in.max_by_quota = 4;
  const Sizing s = size_replicas(in);
  EXPECT_TRUE(s.capped);
  EXPECT_EQ(s.min_replicas, 4);
  EXPECT_EQ(s.max_replicas, 4);
  EXPECT_NE(s.why.find("needs 5, max 4 by quota"), std::string::npos) << s.why;
}

TEST(ReplicaSizing, IdleGoesToZeroAndNothingMeasuredLeavesTheAutoscaler) {
  SizingInput in;
  in.per_replica_rps = 12;
  in.idle = true;
  in.max_by_quota = 3;
  Sizing s = size_replicas(in);
  EXPECT_EQ(s.min_replicas, 0);
  EXPECT_EQ(s.max_replicas, 3);
  EXPECT_NE(s.why.find("idle: min 0"), std::string::npos) << s.why;

  SizingInput none;
  none.forecast_rps = 5;
  s = size_replicas(none);
  EXPECT_EQ(s.scale_target, 0);
  EXPECT_EQ(s.min_replicas, 1);
  EXPECT_NE(s.why.find("bounds left to the autoscaler"), std::string::npos) << s.why;
  // A quota of nothing: no replica at all.
  SizingInput zero;
  zero.forecast_rps = 5;
  zero.per_replica_rps = 10;
  zero.max_by_quota = 0;
  s = size_replicas(zero);
  EXPECT_TRUE(s.capped);
  EXPECT_EQ(s.max_replicas, 0);
}

TEST(ReplicaSizing, AWholeTargetIsTheNearestNeverAboveTheSustainableRate) {
  SizingInput in;
  in.forecast_rps = 20;
  in.whole_target = true;
  in.per_replica_rps = 4.99;  // x 0.8 = 3.99: 4, not the 3 rounding down would give
  EXPECT_DOUBLE_EQ(size_replicas(in).scale_target, 4);
  EXPECT_EQ(size_replicas(in).needed, 5);
  in.headroom = 0;
  in.per_replica_rps = 3.6;  // the nearest, 4, is above what a replica sustains: 3
  EXPECT_DOUBLE_EQ(size_replicas(in).scale_target, 3);
  in.per_replica_rps = 0.3;  // never below 1 (KServe's scaleTarget is at least 1)
  EXPECT_DOUBLE_EQ(size_replicas(in).scale_target, 1);
}

}  // namespace
}  // namespace gpuaas::capacity
