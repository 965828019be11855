#include "gpuaas/capacity/replica_sizing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuaas::capacity {

namespace {

// One decimal at most, none when it is 0: "34", "10.2".
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.ends_with(".0")) s.resize(s.size() - 2);
  return s;
}

}  // namespace

Sizing size_replicas(const SizingInput& in) {
  Sizing s;
  s.forecast_rps = in.forecast_rps;
  const int cap = in.max_by_quota < 0 ? -1 : std::max(0, in.max_by_quota);
  std::string why = "demand " + num(in.observed_rps) + " req/s, forecast " + num(in.forecast_rps);
  if (!(in.per_replica_rps > 0)) {
    s.min_replicas = in.idle ? 0 : 1;
    s.max_replicas = cap < 0 ? std::max(1, s.min_replicas) : std::max(s.min_replicas, cap);
    s.why = why + ", no sustainable rate per replica measured yet: bounds left to the autoscaler";
    return s;
  }
  const double headroom = std::clamp(in.headroom, 0.0, 0.9);
  s.scale_target = in.per_replica_rps * (1 - headroom);
  if (in.whole_target) {
    const double nearest = std::round(s.scale_target);
    s.scale_target =
        std::max(1.0, nearest <= in.per_replica_rps ? nearest : std::floor(s.scale_target));
  }
  s.needed = static_cast<int>(std::ceil(in.forecast_rps / s.scale_target - 1e-9));
  why += ", " + num(in.per_replica_rps) + " req/s per replica" +
         (in.objective.empty() ? "" : " at " + in.objective) + ": target " + num(s.scale_target);
  const int want = in.idle ? 0 : std::max(1, s.needed);
  if (cap >= 0 && want > cap) {
    s.capped = true;
    s.min_replicas = cap;
    s.max_replicas = cap;
    s.why = why + ", needs " + std::to_string(want) + ", max " + std::to_string(cap) + " by quota";
    return s;
  }
  s.min_replicas = want;
  // Above the need the autoscaler may still go, for a burst the forecast has not seen yet: up to
  // four times the need and four more, never past the quota. A ceiling that moves with the need
  // rather than with every change of the queue's free quota: at 200 services following the quota
  // alone sent 16,360 patches an hour.
  const int burst = 4 * std::max(want, s.needed) + 4;
  const bool by_quota = cap >= 0 && cap <= burst;
  s.max_replicas = std::max({1, want, by_quota ? cap : burst});
  s.why = why + (in.idle ? ", idle: min 0" : ", min " + std::to_string(want)) + ", max " +
          std::to_string(s.max_replicas) + (by_quota ? " by quota" : " (burst room)");
  return s;
}

}  // namespace gpuaas::capacity
