// A value that goes up and down (queue depth, GPUs free).
#pragma once

#include <atomic>

#include "gpuaas/telemetry/builder.hpp"
#include "gpuaas/telemetry/metric_family.hpp"
#include "gpuaas/telemetry/metric_type.hpp"

namespace gpuaas::telemetry {

class Gauge {
 public:
  static constexpr MetricType metric_type = MetricType::Gauge;

  Gauge() = default;
  explicit Gauge(double value) : value_(value) {}
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Increment();
  void Increment(double value);
  void Decrement();
  void Decrement(double value);
  void Set(double value);
  double Value() const;

  Sample Collect() const;

 private:
  std::atomic<double> value_{0.0};
};

detail::Builder<Gauge> BuildGauge();

}  // namespace gpuaas::telemetry
