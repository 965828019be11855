#include "kpa.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuaas::sim {

KpaTarget kpa_target(const nlohmann::json& o) {
  KpaTarget t;
  if (!o.is_object()) return t;
  auto spec = o.find("spec");
  if (spec == o.end() || !spec->is_object()) return t;
  auto predictor = spec->find("predictor");
  if (predictor == spec->end() || !predictor->is_object()) return t;
  const nlohmann::json& p = *predictor;
  auto integer = [&p](const char* key, int64_t fallback) {
    auto it = p.find(key);
    return it != p.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  t.min_replicas = static_cast<int32_t>(std::max<int64_t>(0, integer("minReplicas", 1)));
  t.max_replicas = static_cast<int32_t>(std::max<int64_t>(0, integer("maxReplicas", 0)));
  const std::string metric = p.value("scaleMetric", "");
  double target = 0;
  if (auto it = p.find("scaleTarget"); it != p.end() && it->is_number() && it->get<double>() > 0)
    target = it->get<double>();
  // The revision's own utilisation (KServe copies the InferenceService's annotations to it):
  // a percentage above 0 and at most 100, else Knative's default.
  double utilization = kpa::kTargetUtilization;
  if (auto m = o.find("metadata"); m != o.end() && m->is_object()) {
    if (auto a = m->find("annotations"); a != m->end() && a->is_object()) {
      auto u = a->find("autoscaling.knative.dev/target-utilization-percentage");
      if (u != a->end() && u->is_string()) {
        char* end = nullptr;
        const double v = std::strtod(u->get_ref<const std::string&>().c_str(), &end);
        if (end && *end == '\0' && v > 0 && v <= 100) utilization = v / 100;
      }
    }
  }
  if (metric == "rps") {
    t.metric = KpaTarget::Metric::kRps;
    t.per_pod = (target > 0 ? target : kpa::kRpsTargetDefault) * utilization;
  } else {
    const bool concurrency = metric.empty() || metric == "concurrency";
    t.per_pod = (concurrency && target > 0 ? target : kpa::kConcurrencyTargetDefault) * utilization;
  }
  // Knative's TargetMin.
  t.per_pod = std::max(0.01, t.per_pod);
  return t;
}

// Knative's autoscaler.Scale: the stable window's want, bounded by the rates; the panic window's
// when it asks for at least twice the ready pods, never lower while the panic lasts (a stable
// window after the last tick over the threshold).
int32_t Kpa::decide(int64_t now_ms, double stable, double panic, int32_t ready, double per_pod) {
  const double pods = std::max(1, ready);
  const double max_up = std::ceil(kpa::kMaxScaleUpRate * pods);
  const double max_down = std::floor(pods / kpa::kMaxScaleDownRate);
  const double stable_want = std::ceil(stable / per_pod);
  const double panic_want = std::ceil(panic / per_pod);
  auto bounded = [&](double want) {
    return static_cast<int32_t>(std::min(std::max(want, max_down), max_up));
  };
  const bool over = panic_want / pods >= kpa::kPanicThreshold;
  if (over) {
    panic_since_ = now_ms;
  } else if (panic_since_ && *panic_since_ + kpa::kStableWindow.count() < now_ms) {
    panic_since_.reset();
    max_panic_pods_ = 0;
  }
  int32_t want = bounded(stable_want);
  if (panic_since_) {
    want = std::max(want, bounded(panic_want));
    if (want > max_panic_pods_) {
      max_panic_pods_ = want;
    } else {
      want = max_panic_pods_;
    }
  }
  return want;
}

}  // namespace gpuaas::sim
