#include "gpuaas/telemetry/counter.hpp"

namespace gpuaas::telemetry {

void Counter::Increment() { Increment(1.0); }

void Counter::Increment(double value) {
  // `!(value >= 0)` also rejects NaN, which would otherwise poison the counter for good.
  if (!(value >= 0.0)) return;
  value_.fetch_add(value, std::memory_order_relaxed);
}

double Counter::Value() const { return value_.load(std::memory_order_relaxed); }

Sample Counter::Collect() const {
  Sample sample;
  sample.value = Value();
  return sample;
}

detail::Builder<Counter> BuildCounter() { return {}; }

}  // namespace gpuaas::telemetry
