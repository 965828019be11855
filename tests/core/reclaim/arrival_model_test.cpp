#include "gpuaas/reclaim/arrival_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gpuaas::core::reclaim {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

Time at(Millis m) { return Time{m}; }

// Feeds arrivals at the given gaps (starting at t = 0) to a fresh model.
ArrivalModel model_with_gaps(const std::vector<Millis>& gaps, const ArrivalSettings& s = {}) {
  ArrivalModel m(s);
  Millis t{0};
  m.observe(at(t));
  for (const Millis g : gaps) {
    t += g;
    m.observe(at(t));
  }
  return m;
}

TEST(ArrivalModelTest, FirstArrivalClosesNoGap) {
  ArrivalModel m;
  EXPECT_FALSE(m.last_arrival().has_value());
  EXPECT_EQ(m.observe(at(seconds(5))), std::nullopt);
  EXPECT_EQ(m.last_arrival(), at(seconds(5)));
  EXPECT_EQ(m.gaps(), 0u);
  EXPECT_EQ(m.observe(at(seconds(12))), Millis(seconds(7)));
  EXPECT_EQ(m.gaps(), 1u);
}

TEST(ArrivalModelTest, EqualOrEarlierTimesAreIgnored) {
  ArrivalModel m;
  m.observe(at(seconds(10)));
  EXPECT_EQ(m.observe(at(seconds(10))), std::nullopt);
  EXPECT_EQ(m.observe(at(seconds(3))), std::nullopt);
  EXPECT_EQ(m.last_arrival(), at(seconds(10)));
  EXPECT_EQ(m.gaps(), 0u);
  EXPECT_EQ(m.observe(at(seconds(11))), Millis(seconds(1)));
}

TEST(ArrivalModelTest, HistoryKeepsTheNewestGaps) {
  ArrivalSettings s;
  s.history = 4;
  s.min_gaps = 1;
  s.min_timeout = seconds(1);
  // Four long gaps, then four short ones: only the short ones remain.
  const ArrivalModel m = model_with_gaps({minutes(10), minutes(10), minutes(10), minutes(10),
                                          seconds(2), seconds(4), seconds(6), seconds(8)},
                                         s);
  EXPECT_EQ(m.gaps(), 4u);
  EXPECT_EQ(m.median_gap(), Millis(seconds(6)));
  // A huge lambda covers them all (and the exponential tail past them), never the old 10 min.
  EXPECT_GE(m.timeout(1e9), Millis(seconds(9)));
  EXPECT_LT(m.timeout(1e9), Millis(minutes(2)));
}

TEST(ArrivalModelTest, FewerThanMinGapsGivesKnativeTimeout) {
  const ArrivalSettings s;
  const ArrivalModel m = model_with_gaps({seconds(5), seconds(5), seconds(5)}, s);
  ASSERT_LT(m.gaps(), s.min_gaps);
  EXPECT_EQ(m.timeout(1), s.knative_timeout);
  EXPECT_EQ(m.timeout(1e6), s.knative_timeout);
  EXPECT_EQ(ArrivalModel(s).timeout(50), s.knative_timeout);
}

TEST(ArrivalModelTest, TimeoutIsClampedToBounds) {
  const ArrivalSettings s;
  // Gaps shorter than min_timeout: covering them (4 s) would be cheapest, but not below the floor.
  const ArrivalModel fast = model_with_gaps({seconds(1), seconds(2), seconds(1), seconds(3)}, s);
  EXPECT_EQ(fast.timeout(0.001), s.min_timeout);
  EXPECT_LE(fast.timeout(90), s.knative_timeout);  // a busy service stays warm, within reason
  // Gaps just under max_timeout: gap + resolution is past it, so the ceiling is the answer.
  const Millis almost = Millis(s.max_timeout) - Millis(500);
  const ArrivalModel slow = model_with_gaps({almost, almost, almost, almost}, s);
  EXPECT_EQ(slow.timeout(1e9), s.max_timeout);
  EXPECT_EQ(slow.timeout(1), s.min_timeout);
  // Gaps past max_timeout cannot be waited out: no point in staying warm for any lambda.
  const ArrivalModel slower =
      model_with_gaps({minutes(40), minutes(50), minutes(45), minutes(60)}, s);
  EXPECT_EQ(slower.timeout(90), s.min_timeout);
}

TEST(ArrivalModelTest, BimodalServiceTimesOutJustAboveItsShortGaps) {
  const ArrivalSettings s;
  std::vector<Millis> gaps;
  for (int i = 0; i < 40; ++i)
    gaps.push_back(i % 8 == 7 ? Millis(minutes(20)) : Millis(seconds(5)));
  const ArrivalModel m = model_with_gaps(gaps, s);
  // Waiting out a 20 min gap costs far more than a cold start worth the knative timeout.
  const Millis t = m.timeout(90);
  EXPECT_GE(t, s.min_timeout);
  EXPECT_LE(t, Millis(seconds(10)));
  EXPECT_LT(t, s.knative_timeout);
}

TEST(ArrivalModelTest, SlowServiceWithLargeLambdaStaysWarmThroughItsGaps) {
  const ArrivalSettings s;
  std::vector<Millis> gaps;
  for (int i = 0; i < 20; ++i) gaps.push_back(seconds(100 + (i * 7) % 51));  // 100..150 s
  const ArrivalModel m = model_with_gaps(gaps, s);
  const Millis longest = *std::max_element(gaps.begin(), gaps.end());
  EXPECT_GT(m.timeout(1000), longest);
  // With a small lambda the same service goes to zero right away instead.
  EXPECT_EQ(m.timeout(10), s.min_timeout);
}

TEST(ColdStartBudgetTest, StartsAtKnativeTimeout) {
  const ColdStartBudget b;
  EXPECT_DOUBLE_EQ(b.lambda_seconds(), 90);
  EXPECT_EQ(b.cold_starts(), 0u);
  EXPECT_EQ(b.reference_cold_starts(), 0u);
}

TEST(ColdStartBudgetTest, LambdaRisesWhenOursExceedTheReference) {
  ColdStartBudget b;
  b.record_gap(seconds(60), seconds(10));  // cold for us, warm for Knative
  EXPECT_EQ(b.cold_starts(), 1u);
  EXPECT_EQ(b.reference_cold_starts(), 0u);
  EXPECT_GT(b.lambda_seconds(), 90);
  double last = b.lambda_seconds();
  for (int i = 0; i < 200; ++i) {
    b.record_gap(seconds(60), seconds(10));
    EXPECT_GE(b.lambda_seconds(), last);
    last = b.lambda_seconds();
  }
  EXPECT_DOUBLE_EQ(b.lambda_seconds(), 3600);  // clamped
}

TEST(ColdStartBudgetTest, LambdaFallsWhenOursAreBelowTheReference) {
  ColdStartBudget b;
  b.record_gap(seconds(200), seconds(300));  // cold for Knative only
  EXPECT_EQ(b.cold_starts(), 0u);
  EXPECT_EQ(b.reference_cold_starts(), 1u);
  EXPECT_LT(b.lambda_seconds(), 90);
  double last = b.lambda_seconds();
  for (int i = 0; i < 200; ++i) {
    b.record_gap(seconds(200), seconds(300));
    EXPECT_LE(b.lambda_seconds(), last);
    last = b.lambda_seconds();
  }
  EXPECT_DOUBLE_EQ(b.lambda_seconds(), 1);  // clamped
}

TEST(ColdStartBudgetTest, LambdaHoldsWithoutColdStarts) {
  ColdStartBudget b;
  b.record_gap(seconds(5), seconds(10));  // warm for both
  EXPECT_DOUBLE_EQ(b.lambda_seconds(), 90);
}

TEST(ColdStartBudgetTest, LambdaCreepsUpWhenEvenToStayBelowTheReference) {
  ColdStartBudget b;
  b.record_gap(seconds(200), seconds(10));  // cold for both
  EXPECT_EQ(b.cold_starts(), 1u);
  EXPECT_EQ(b.reference_cold_starts(), 1u);
  EXPECT_GT(b.lambda_seconds(), 90);
  EXPECT_LT(b.lambda_seconds(), 91);
}

TEST(ColdStartBudgetTest, StepsAreSmallAfterOneGap) {
  // One disagreement must not swing lambda: the sign rule's x1.5 did, and lost zero-seconds.
  ColdStartBudget up, down;
  up.record_gap(seconds(60), seconds(10));
  down.record_gap(seconds(200), seconds(300));
  EXPECT_LT(up.lambda_seconds(), 90 * 1.1);
  EXPECT_GT(down.lambda_seconds(), 90 / 1.1);
}

// 30 services with Poisson arrivals at rates proportional to 1/(i+1), ~3000 arrivals over 3 h,
// run through both policies on the same event stream.
TEST(ArrivalModelPopulationTest, KeepsMoreAtZeroWithNoMoreColdStartsThanKnative) {
  constexpr int kServices = 30;
  constexpr double kHorizon = 3 * 3600;  // seconds
  constexpr double kArrivals = 3000;
  double harmonic = 0;
  for (int i = 0; i < kServices; ++i) harmonic += 1.0 / (i + 1);

  std::mt19937_64 rng(42);
  std::vector<std::pair<Millis, int>> events;  // (time, service)
  for (int i = 0; i < kServices; ++i) {
    const double rate = kArrivals / kHorizon / harmonic / (i + 1);
    std::exponential_distribution<double> gap(rate);
    for (double t = gap(rng); t < kHorizon; t += gap(rng)) {
      events.emplace_back(Millis(static_cast<int64_t>(t * 1000)), i);
    }
  }
  std::sort(events.begin(), events.end());

  const ArrivalSettings s;
  ColdStartBudget budget(s);
  std::vector<ArrivalModel> models(kServices, ArrivalModel(s));
  std::vector<Millis> in_force(kServices, s.knative_timeout);
  double ours_zero = 0, knative_zero = 0;
  uint64_t ours_cold = 0, knative_cold = 0;
  const auto secs = [](Millis m) { return std::chrono::duration<double>(m).count(); };
  for (const auto& [t, i] : events) {
    if (const auto g = models[i].observe(at(t))) {
      knative_zero += std::max(0.0, secs(*g - s.knative_timeout));
      if (*g > s.knative_timeout) ++knative_cold;
      ours_zero += std::max(0.0, secs(*g - in_force[i]));
      if (*g > in_force[i]) ++ours_cold;
      budget.record_gap(*g, in_force[i]);
    }
    in_force[i] = models[i].timeout(budget.lambda_seconds());
  }

  std::cout << "arrivals " << events.size() << ", lambda " << budget.lambda_seconds()
            << " s\nGPU-seconds at zero: ours " << ours_zero << ", knative " << knative_zero
            << "\ncold starts: ours " << ours_cold << ", knative " << knative_cold << "\n";
  RecordProperty("ours_zero_seconds", std::to_string(ours_zero));
  RecordProperty("knative_zero_seconds", std::to_string(knative_zero));
  RecordProperty("ours_cold_starts", std::to_string(ours_cold));
  RecordProperty("knative_cold_starts", std::to_string(knative_cold));

  EXPECT_GT(events.size(), 2500u);
  EXPECT_LT(events.size(), 3500u);
  EXPECT_EQ(budget.cold_starts(), ours_cold);
  EXPECT_EQ(budget.reference_cold_starts(), knative_cold);
  EXPECT_GE(ours_zero, knative_zero);
  EXPECT_LE(ours_cold, knative_cold);
}

}  // namespace
}  // namespace gpuaas::core::reclaim
