#include "gpuaas/telemetry/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace gpuaas::telemetry {
namespace {

Histogram::BucketBoundaries Validated(Histogram::BucketBoundaries boundaries) {
  if (!boundaries.empty() && boundaries.back() == std::numeric_limits<double>::infinity()) {
    boundaries.pop_back();  // the +Inf bucket always exists; do not emit it twice
  }
  for (std::size_t i = 0; i < boundaries.size(); ++i) {
    if (std::isnan(boundaries[i])) {
      throw std::invalid_argument("histogram bucket boundary is NaN");
    }
    if (i > 0 && !(boundaries[i - 1] < boundaries[i])) {
      throw std::invalid_argument("histogram bucket boundaries must be strictly increasing");
    }
  }
  return boundaries;
}

}  // namespace

Histogram::Histogram(BucketBoundaries boundaries)
    : boundaries_(Validated(std::move(boundaries))), counts_(boundaries_.size() + 1) {}

void Histogram::Observe(double value) {
  // Buckets are "less than or equal": the first boundary >= value. NaN compares false everywhere
  // and so falls through to the +Inf bucket.
  const auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), value);
  const auto index = static_cast<std::size_t>(it - boundaries_.begin());
  counts_[index].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::CumulativeCounts() const {
  std::vector<std::uint64_t> cumulative;
  cumulative.reserve(counts_.size());
  std::uint64_t running = 0;
  for (const auto& count : counts_) {
    running += count.load(std::memory_order_relaxed);
    cumulative.push_back(running);
  }
  return cumulative;
}

double Histogram::Sum() const { return sum_.load(std::memory_order_relaxed); }

std::uint64_t Histogram::Count() const { return CumulativeCounts().back(); }

Sample Histogram::Collect() const {
  Sample sample;
  // Count is derived from the same bucket reads so that +Inf == _count always holds in the output.
  const std::vector<std::uint64_t> cumulative = CumulativeCounts();
  sample.buckets.reserve(cumulative.size());
  for (std::size_t i = 0; i < cumulative.size(); ++i) {
    const double bound =
        i < boundaries_.size() ? boundaries_[i] : std::numeric_limits<double>::infinity();
    sample.buckets.push_back(Bucket{bound, cumulative[i]});
  }
  sample.sample_count = cumulative.back();
  sample.sample_sum = Sum();
  return sample;
}

Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  if (!(start > 0.0) || !(factor > 1.0) || count < 1) {
    throw std::invalid_argument("ExponentialBuckets needs start > 0, factor > 1, count >= 1");
  }
  Histogram::BucketBoundaries buckets;
  buckets.reserve(static_cast<std::size_t>(count));
  double bound = start;
  for (int i = 0; i < count; ++i) {
    buckets.push_back(bound);
    bound *= factor;
  }
  return buckets;
}

Histogram::BucketBoundaries LinearBuckets(double start, double width, int count) {
  if (!std::isfinite(start) || !(width > 0.0) || count < 1) {
    throw std::invalid_argument("LinearBuckets needs a finite start, width > 0, count >= 1");
  }
  Histogram::BucketBoundaries buckets;
  buckets.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    // start + i * width rather than accumulating, so rounding errors do not build up.
    buckets.push_back(start + static_cast<double>(i) * width);
  }
  return buckets;
}

detail::Builder<Histogram> BuildHistogram() { return {}; }

}  // namespace gpuaas::telemetry
