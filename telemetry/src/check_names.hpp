// Prometheus naming rules, shared by Family and Registry (private to the library).
#pragma once

#include <string_view>

#include "gpuaas/telemetry/metric_family.hpp"

namespace gpuaas::telemetry::detail {

// [a-zA-Z_:][a-zA-Z0-9_:]*, not starting with "__" (reserved for Prometheus itself).
bool IsValidMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__".
bool IsValidLabelName(std::string_view name);

// Throws std::invalid_argument naming the offender.
void CheckMetricName(std::string_view name);
void CheckLabelNames(const Labels& labels);

}  // namespace gpuaas::telemetry::detail
