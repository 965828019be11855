// The kinds of metric this module exposes; mirrors prometheus::MetricType (subset).
#pragma once

#include <string_view>

namespace gpuaas::telemetry {

enum class MetricType {
  Counter,
  Gauge,
  Histogram,
};

// The word used on the "# TYPE" line of the text exposition format.
constexpr std::string_view ToString(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace gpuaas::telemetry
