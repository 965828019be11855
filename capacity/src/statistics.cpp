#include "gpuaas/capacity/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuaas::capacity {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// Acklam's rational approximation (relative error below 1.2e-9), good enough for a bound.
double normal_quantile(double p) {
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double low = 0.02425;
  if (p < low) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -normal_quantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

ShareBound share_upper_bound(const std::vector<std::pair<long, long>>& batches, double confidence) {
  long events = 0, samples = 0;
  for (const auto& [e, n] : batches) {
    events += e;
    samples += n;
  }
  ShareBound b;
  if (samples == 0) return b;
  b.share = static_cast<double>(events) / static_cast<double>(samples);
  const double z = confidence > 0.5 ? normal_quantile(confidence) : 0.0;
  // Independent samples: the binomial standard error.
  double se = std::sqrt(b.share * (1 - b.share) / static_cast<double>(samples));
  // Batch means: the spread of the batches' shares, which sees bursts.
  std::vector<double> shares;
  for (const auto& [e, n] : batches)
    if (n > 0) shares.push_back(static_cast<double>(e) / static_cast<double>(n));
  if (shares.size() >= 2) {
    double var = 0;
    for (double s : shares) var += (s - b.share) * (s - b.share);
    var /= static_cast<double>(shares.size() - 1);
    se = std::max(se, std::sqrt(var / static_cast<double>(shares.size())));
  }
  b.upper = std::min(1.0, b.share + z * se);
  return b;
}

}  // namespace gpuaas::capacity
