// Knative's Pod Autoscaler (KPA), which KServe's Serverless mode puts in front of a predictor: the
// replicas follow the request load between minReplicas and maxReplicas. Its constants are
// Knative's defaults (knative.dev/serving, config-autoscaler). Private to gpuaas_sim.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>

namespace gpuaas::sim {

namespace kpa {
using Millis = std::chrono::milliseconds;
// tick-interval: how often the autoscaler decides.
inline constexpr Millis kTick{std::chrono::seconds(2)};
// stable-window: the metric is averaged over it; no traffic for it lets the last pod go.
inline constexpr Millis kStableWindow{std::chrono::seconds(60)};
// panic-window-percentage 10: of the stable window.
inline constexpr Millis kPanicWindow = kStableWindow / 10;
// scale-to-zero-grace-period: after the stable window says zero, before the last pod goes.
inline constexpr Millis kScaleToZeroGrace{std::chrono::seconds(30)};
// container-concurrency-target-default: in-flight requests per pod.
inline constexpr double kConcurrencyTargetDefault = 100;
// requests-per-second-target-default, for scaleMetric rps without a scaleTarget.
inline constexpr double kRpsTargetDefault = 200;
// container-concurrency-target-percentage 70 and TargetUtilization: the share of the target
// aimed at. Knative applies it to rps targets too (ResolveMetricTarget), so KServe's
// scaleTarget N of rps means 0.7 N per pod, unless the revision's
// autoscaling.knative.dev/target-utilization-percentage says otherwise.
inline constexpr double kTargetUtilization = 0.7;
// panic-threshold-percentage 200: panic when the panic window wants twice the ready pods.
inline constexpr double kPanicThreshold = 2.0;
// max-scale-up-rate and max-scale-down-rate: a tick multiplies or divides the ready pods by at
// most these.
inline constexpr double kMaxScaleUpRate = 1000;
inline constexpr double kMaxScaleDownRate = 2;
}  // namespace kpa

// What the predictor asks of its autoscaler: KServe's minReplicas (default 1), maxReplicas (0 or
// absent: no bound), scaleMetric (concurrency, the default, or rps; cpu and memory are HPA's and
// read as the default) and scaleTarget, as the per-pod value Knative aims at.
struct KpaTarget {
  enum class Metric { kConcurrency, kRps };
  Metric metric = Metric::kConcurrency;
  double per_pod = kpa::kConcurrencyTargetDefault * kpa::kTargetUtilization;
  int32_t min_replicas = 1;
  int32_t max_replicas = 0;
};
// From an InferenceService object; the defaults when it has no predictor.
KpaTarget kpa_target(const nlohmann::json& inference_service);

// The decider of one revision, tick by tick (Knative's autoscaler.Scale): stable and panic are
// the revision's metric (its total, not per pod) averaged over each window.
class Kpa {
 public:
  // The pods it wants before minReplicas and maxReplicas; `ready` is its ready pods.
  int32_t decide(int64_t now_ms, double stable, double panic, int32_t ready, double per_pod);
  bool panicking() const { return panic_since_.has_value(); }

 private:
  std::optional<int64_t> panic_since_;  // last tick over the panic threshold
  int32_t max_panic_pods_ = 0;
};

}  // namespace gpuaas::sim
