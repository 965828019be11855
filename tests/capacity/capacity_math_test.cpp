// The pure parts of the capacity library: statistics, Erlang C, histogram quantiles, the knee.
#include <gtest/gtest.h>

#include <cmath>

#include "gpuaas/capacity/erlang_c.hpp"
#include "gpuaas/capacity/knee.hpp"
#include "gpuaas/capacity/statistics.hpp"

namespace gpuaas::capacity {
namespace {

TEST(Statistics, QuantilesInterpolateBetweenRanks) {
  std::vector<double> v = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(v, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(quantile(v, 1), 5);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

TEST(Statistics, NormalQuantileKnownValues) {
  EXPECT_NEAR(normal_quantile(0.5), 0, 1e-9);
  EXPECT_NEAR(normal_quantile(0.9), 1.2815516, 1e-6);
  EXPECT_NEAR(normal_quantile(0.975), 1.9599640, 1e-6);
  EXPECT_NEAR(normal_quantile(0.01), -2.3263479, 1e-6);
}

TEST(Statistics, BatchMeansSeeBursts) {
  // 10 batches of 100: the same 50 events spread evenly or all in one batch.
  std::vector<std::pair<long, long>> even(10, {5, 100}), burst(10, {0, 100});
  burst[3].first = 50;
  const auto e = share_upper_bound(even, 0.9), b = share_upper_bound(burst, 0.9);
  EXPECT_DOUBLE_EQ(e.share, 0.05);
  EXPECT_DOUBLE_EQ(b.share, 0.05);
  // Even: the binomial bound; a burst is less certain.
  EXPECT_NEAR(e.upper, 0.05 + 1.2815516 * std::sqrt(0.05 * 0.95 / 1000), 1e-6);
  EXPECT_GT(b.upper, e.upper * 1.5);
  EXPECT_DOUBLE_EQ(share_upper_bound({}, 0.9).upper, 0);
}

TEST(ErlangC, KnownValues) {
  // One server: the probability of waiting is the utilisation.
  EXPECT_NEAR(erlang_c(1, 0.7), 0.7, 1e-12);
  // A classic table value: 10 agents, 8 Erlangs.
  EXPECT_NEAR(erlang_c(10, 8), 0.4092, 1e-4);
  EXPECT_EQ(erlang_c(4, 4), 1);
  EXPECT_NEAR(wait_exceeds(1, 10, 7, 0.1), 0.7 * std::exp(-0.3), 1e-12);
  const double c = sustainable_rate(16, 40, 0.003, 0.05);
  EXPECT_NEAR(wait_exceeds(16, 40, c, 0.003), 0.05, 1e-6);
  EXPECT_LT(c, 16 * 40);
  EXPECT_GT(wait_exceeds(16, 40, 1.3 * c, 0.003), 0.2);
}

TEST(HistogramQuantile, AsPromQLDoesIt) {
  // 100 observations: 50 at or below 0.1, 90 at or below 0.5, all at or below 1.
  std::vector<std::pair<double, double>> b = {{0.1, 50}, {0.5, 90}, {1, 100}, {INFINITY, 100}};
  EXPECT_NEAR(histogram_quantile(b, 0.5), 0.1, 1e-12);
  EXPECT_NEAR(histogram_quantile(b, 0.95), 0.75, 1e-12);
  EXPECT_NEAR(histogram_quantile(b, 0.25), 0.05, 1e-12);
  // In +Inf: the highest finite bound.
  EXPECT_NEAR(histogram_quantile({{0.1, 1}, {INFINITY, 10}}, 0.95), 0.1, 1e-12);
  EXPECT_EQ(histogram_quantile({{0.1, 0}, {INFINITY, 0}}, 0.95), -1);
}

Window window(double rate, double ttft_p95) {
  Window w;
  w.start = 0;
  w.end = 60;
  w.rate = rate;
  w.requests = rate * 60;
  w.ttft_p95 = ttft_p95;
  return w;
}

TEST(Knee, SeparatesWindowsThatMetTheObjectiveFromThoseThatDidNot) {
  Objectives o;
  o.ttft_p95 = 0.4;
  std::vector<Window> ws;
  for (double r : {2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}) ws.push_back(window(r, 0.1));
  for (double r : {9.5, 10.0, 11.0, 12.0}) ws.push_back(window(r, 0.9));
  ws.push_back(window(8.5, 0.6));  // one unlucky window below the knee
  ws.push_back(window(0.1, 5.0));  // too few requests: left out
  const KneeEstimate k = estimate_knee(ws, o);
  EXPECT_EQ(k.bound, "bracketed");
  EXPECT_DOUBLE_EQ(k.sustainable_rps, 8.0);
  EXPECT_EQ(k.windows, 12);
  EXPECT_EQ(k.missing, 5);
  EXPECT_NEAR(k.agreement, 1.0, 1e-12);
  EXPECT_GT(k.confidence, 0.7);
}

TEST(Knee, OnlyABoundWhenOneSideWasNeverSeen) {
  Objectives o;
  o.ttft_p95 = 0.4;
  std::vector<Window> ws;
  for (double r : {2.0, 3.0, 4.0, 5.0, 6.0}) ws.push_back(window(r, 0.1));
  KneeEstimate k = estimate_knee(ws, o);
  EXPECT_EQ(k.bound, "at_least");
  EXPECT_DOUBLE_EQ(k.sustainable_rps, 6.0);
  EXPECT_LT(k.confidence, 0.5);
  for (auto& w : ws) w.ttft_p95 = 2;
  k = estimate_knee(ws, o);
  EXPECT_EQ(k.bound, "at_most");
  EXPECT_DOUBLE_EQ(k.sustainable_rps, 0);
  ws.resize(2);
  EXPECT_EQ(estimate_knee(ws, o).bound, "none");
}

}  // namespace
}  // namespace gpuaas::capacity
