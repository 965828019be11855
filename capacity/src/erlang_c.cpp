#include "gpuaas/capacity/erlang_c.hpp"

#include <cmath>

namespace gpuaas::capacity {

double erlang_c(int k, double a) {
  if (k <= 0 || a >= k) return 1;
  if (a <= 0) return 0;
  // Terms a^i/i! built one from the other: no factorial overflows for large k.
  double term = 1, sum = 0;
  for (int i = 0; i < k; ++i) {
    sum += term;
    term *= a / (i + 1);
  }
  const double last = term * k / (k - a);
  return last / (sum + last);
}

double wait_exceeds(int k, double mu, double lambda, double t) {
  if (lambda <= 0) return 0;
  if (lambda >= k * mu) return 1;
  return erlang_c(k, lambda / mu) * std::exp(-(k * mu - lambda) * t);
}

double sustainable_rate(int k, double mu, double t, double share) {
  double lo = 0, hi = k * mu;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (wait_exceeds(k, mu, mid, t) <= share ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace gpuaas::capacity
