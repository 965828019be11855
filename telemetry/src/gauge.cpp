#include "gpuaas/telemetry/gauge.hpp"

namespace gpuaas::telemetry {

void Gauge::Increment() { Increment(1.0); }
void Gauge::Increment(double value) { value_.fetch_add(value, std::memory_order_relaxed); }
void Gauge::Decrement() { Decrement(1.0); }
void Gauge::Decrement(double value) { value_.fetch_sub(value, std::memory_order_relaxed); }
void Gauge::Set(double value) { value_.store(value, std::memory_order_relaxed); }
double Gauge::Value() const { return value_.load(std::memory_order_relaxed); }

Sample Gauge::Collect() const {
  Sample sample;
  sample.value = Value();
  return sample;
}

detail::Builder<Gauge> BuildGauge() { return {}; }

}  // namespace gpuaas::telemetry
