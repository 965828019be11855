#include "gpuaas/capacity/knee.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuaas::capacity {

double histogram_quantile(std::vector<std::pair<double, double>> buckets, double q) {
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty()) return -1;
  const double total = buckets.back().second;
  if (total <= 0 || !std::isfinite(total)) return -1;
  const double rank = std::clamp(q, 0.0, 1.0) * total;
  double prev_le = 0, prev_count = 0;
  for (const auto& [le, count] : buckets) {
    if (count >= rank) {
      if (std::isinf(le)) return prev_le;  // the highest finite bound
      if (count - prev_count <= 0) return le;
      const double lower = prev_le < le ? prev_le : 0;
      return lower + (le - lower) * (rank - prev_count) / (count - prev_count);
    }
    prev_le = le;
    prev_count = count;
  }
  return prev_le;
}

bool window_meets(const Window& w, const Objectives& o, std::string* why) {
  auto miss = [&](const std::string& s) {
    if (why) *why = s;
    return false;
  };
  if (o.ttft_p95 && w.ttft_p95 > *o.ttft_p95)
    return miss("p95 TTFT " + format_seconds(w.ttft_p95) + " > " + format_seconds(*o.ttft_p95));
  if (o.tpot_p95 && w.tpot_p95 > *o.tpot_p95)
    return miss("p95 TPOT " + format_seconds(w.tpot_p95) + " > " + format_seconds(*o.tpot_p95));
  if (o.e2e_p95 && w.e2e_p95 > *o.e2e_p95)
    return miss("p95 end to end " + format_seconds(w.e2e_p95) + " > " + format_seconds(*o.e2e_p95));
  if (w.error_rate > o.max_error_rate) return miss("errors above the budget");
  if (w.quality < o.min_quality) return miss("quality below the threshold");
  return true;
}

KneeEstimate estimate_knee(const std::vector<Window>& all, const Objectives& o, double min_requests,
                           int min_windows) {
  std::vector<std::pair<double, bool>> seen;  // (rate, met)
  for (const auto& w : all)
    if (w.requests >= min_requests && w.end > w.start)
      seen.emplace_back(w.rate, window_meets(w, o));
  std::sort(seen.begin(), seen.end());
  KneeEstimate k;
  k.windows = static_cast<int>(seen.size());
  for (const auto& [rate, met] : seen) (met ? k.meeting : k.missing) += 1;
  if (!seen.empty()) k.highest_rate = seen.back().first;
  if (k.windows < min_windows) return k;
  // The split that misplaces fewest windows: those below it should have met the objectives,
  // those above should not. Ties keep the lower split (the more careful answer).
  const int n = k.windows;
  int best = 0, best_wrong = std::numeric_limits<int>::max();
  int missed_below = 0, met_above = k.meeting;
  for (int i = 0; i <= n; ++i) {
    const int wrong = missed_below + met_above;
    if (wrong < best_wrong) {
      best_wrong = wrong;
      best = i;
    }
    if (i < n) (seen[i].second ? met_above : missed_below) += seen[i].second ? -1 : 1;
  }
  k.agreement = 1 - static_cast<double>(best_wrong) / n;
  int met_below = 0, missed_above = 0;
  for (int i = 0; i < n; ++i) {
    if (i < best && seen[i].second) ++met_below;
    if (i >= best && !seen[i].second) ++missed_above;
  }
  if (best == 0) {
    k.bound = "at_most";
    k.sustainable_rps = 0;
  } else {
    // The highest rate below the split that was seen to meet the objectives.
    for (int i = best - 1; i >= 0; --i)
      if (seen[i].second) {
        k.sustainable_rps = seen[i].first;
        break;
      }
    k.bound = best == n ? "at_least" : "bracketed";
  }
  // Support on each side: a knee seen from both sides by a few windows each is trusted; a bound
  // seen from one side only is half as much.
  auto support = [](int m) { return 1 - std::exp(-m / 3.0); };
  k.confidence =
      k.agreement * (k.bound == "bracketed"
                         ? support(met_below) * support(missed_above)
                         : 0.5 * support(k.bound == "at_least" ? met_below : missed_above));
  return k;
}

}  // namespace gpuaas::capacity
