// Knative's decider as the simulator plays it (sim/src/kpa.hpp), tick by tick: the targets it reads
// from an InferenceService, the stable window's want, panic, and the bounds on each step.
#include "kpa.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuaas::sim {
namespace {

using nlohmann::json;

json service(const json& predictor, const json& annotations = json::object()) {
  return {{"metadata", {{"name", "chat"}, {"annotations", annotations}}},
          {"spec", {{"predictor", predictor}}}};
}

TEST(KpaTest, TargetsAreKServesFieldsAtKnativesUtilisation) {
  KpaTarget d = kpa_target(service(json::object()));
  EXPECT_EQ(d.metric, KpaTarget::Metric::kConcurrency);
  EXPECT_DOUBLE_EQ(d.per_pod, 70);  // 100 in flight at 70%
  EXPECT_EQ(d.min_replicas, 1);     // KServe's default
  EXPECT_EQ(d.max_replicas, 0);     // no bound
  KpaTarget r = kpa_target(service(
      {{"minReplicas", 0}, {"maxReplicas", 6}, {"scaleMetric", "rps"}, {"scaleTarget", 5}}));
  EXPECT_EQ(r.metric, KpaTarget::Metric::kRps);
  EXPECT_DOUBLE_EQ(r.per_pod, 3.5);  // Knative takes 70% of an rps target too
  EXPECT_EQ(r.min_replicas, 0);
  EXPECT_EQ(r.max_replicas, 6);
  EXPECT_DOUBLE_EQ(kpa_target(service({{"scaleMetric", "rps"}})).per_pod, 140);  // 200 at 70%
  // The revision's own utilisation, as gpuaas's SET_SCALE writes it; nonsense is ignored.
  const json rps = {{"scaleMetric", "rps"}, {"scaleTarget", 3}};
  EXPECT_DOUBLE_EQ(
      kpa_target(service(rps, {{"autoscaling.knative.dev/target-utilization-percentage", "100"}}))
          .per_pod,
      3);
  EXPECT_DOUBLE_EQ(
      kpa_target(service(rps, {{"autoscaling.knative.dev/target-utilization-percentage", "x"}}))
          .per_pod,
      2.1);
}

TEST(KpaTest, StableWindowWantsMetricOverTargetWithinTheRates) {
  Kpa k;
  EXPECT_EQ(k.decide(0, 9, 9, 3, 3.5), 3);         // ceil(9 / 3.5)
  EXPECT_EQ(k.decide(2000, 0.5, 0.5, 8, 3.5), 4);  // down at most to half the ready pods
  EXPECT_EQ(k.decide(4000, 0, 0, 4, 3.5), 2);
  EXPECT_FALSE(k.panicking());
}

TEST(KpaTest, PanicScalesUpAndNeverDownUntilAStableWindowHasPassed) {
  Kpa k;
  // The panic window wants 6 against 1 ready: panic, and its want.
  EXPECT_EQ(k.decide(0, 3, 21, 1, 3.5), 6);
  EXPECT_TRUE(k.panicking());
  // Quiet again (want 1): held at 6 while the panic lasts, a stable window after the last tick
  // over the threshold.
  EXPECT_EQ(k.decide(2000, 3, 3, 6, 3.5), 6);
  EXPECT_EQ(k.decide(60'000, 3, 3, 6, 3.5), 6);
  EXPECT_EQ(k.decide(60'002, 3, 3, 6, 3.5), 3);  // out of panic: the stable want, halved at most
  EXPECT_FALSE(k.panicking());
}

}  // namespace
}  // namespace gpuaas::sim
