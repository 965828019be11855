// Distribution of observations in fixed buckets (latencies, sizes).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gpuaas/telemetry/builder.hpp"
#include "gpuaas/telemetry/metric_family.hpp"
#include "gpuaas/telemetry/metric_type.hpp"

namespace gpuaas::telemetry {

class Histogram {
 public:
  static constexpr MetricType metric_type = MetricType::Histogram;
  using BucketBoundaries = std::vector<double>;

  // Upper bounds (inclusive) of the finite buckets, strictly increasing; the +Inf bucket is
  // implicit (a trailing +Inf is accepted and dropped). Throws std::invalid_argument otherwise or
  // on NaN.
  explicit Histogram(BucketBoundaries boundaries);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Lock-free. NaN lands in the +Inf bucket and makes the sum NaN, as in other Prometheus clients.
  void Observe(double value);

  const BucketBoundaries& Boundaries() const { return boundaries_; }
  // Cumulative count per bucket, one per boundary plus the final +Inf bucket (== Count() at the
  // moment of the call). Read counter by counter, so it is consistent with itself but may lag a
  // concurrent Sum()/Count() call.
  std::vector<std::uint64_t> CumulativeCounts() const;
  double Sum() const;
  std::uint64_t Count() const;

  Sample Collect() const;

 private:
  BucketBoundaries boundaries_;
  // Per-bucket (not cumulative) counts so that Observe touches one counter; size boundaries_ + 1.
  std::vector<std::atomic<std::uint64_t>> counts_;
  std::atomic<double> sum_{0.0};
};

// start, start*factor, ... (count values). Throws std::invalid_argument unless start > 0,
// factor > 1 and count >= 1.
Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count);
// start, start+width, ... (count values). Throws std::invalid_argument unless start is finite,
// width > 0 and count >= 1.
Histogram::BucketBoundaries LinearBuckets(double start, double width, int count);

detail::Builder<Histogram> BuildHistogram();

}  // namespace gpuaas::telemetry
