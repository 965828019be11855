// Plain-data snapshot of metrics, produced by Registry::Collect() and consumed by serializers.
// Decoupling the snapshot from the live (atomic) metric objects keeps serialization lock-free with
// respect to the hot path and lets tests build expected output by hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuaas/telemetry/metric_type.hpp"

namespace gpuaas::telemetry {

// Label name -> value; a std::map so series order is deterministic (as prometheus::Labels).
using Labels = std::map<std::string, std::string>;

// One histogram bucket: observations <= upper_bound, counted cumulatively.
struct Bucket {
  double upper_bound = 0.0;  // the last bucket is always +Inf
  std::uint64_t cumulative_count = 0;
};

// One series of a family at the time of collection.
struct Sample {
  Labels labels;                   // the family's constant labels plus the series' own
  double value = 0.0;              // Counter and Gauge
  std::vector<Bucket> buckets;     // Histogram: cumulative, ends with the +Inf bucket
  std::uint64_t sample_count = 0;  // Histogram: equals buckets.back().cumulative_count
  double sample_sum = 0.0;         // Histogram
};

struct MetricFamily {
  std::string name;
  std::string help;
  MetricType type = MetricType::Gauge;
  std::vector<Sample> samples;
};

}  // namespace gpuaas::telemetry
