// A monotonically increasing value (requests served, errors seen).
#pragma once

#include <atomic>

#include "gpuaas/telemetry/builder.hpp"
#include "gpuaas/telemetry/metric_family.hpp"
#include "gpuaas/telemetry/metric_type.hpp"

namespace gpuaas::telemetry {

class Counter {
 public:
  static constexpr MetricType metric_type = MetricType::Counter;

  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Increment();
  // Negative and NaN increments are ignored: a counter that went down would read as a reset.
  void Increment(double value);
  double Value() const;

  // Fills value only; labels are the family's business.
  Sample Collect() const;

 private:
  std::atomic<double> value_{0.0};
};

detail::Builder<Counter> BuildCounter();

}  // namespace gpuaas::telemetry
