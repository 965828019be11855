// Prometheus text exposition format 0.0.4 (what /metrics serves).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gpuaas/telemetry/metric_family.hpp"

namespace gpuaas::telemetry {

// Output is stable: families sorted by name, series by labels, so it diffs and tests well.
// Families without series are omitted entirely (a family shows up once it has a series); an empty
// help omits the "# HELP" line.
class TextSerializer {
 public:
  std::string Serialize(const std::vector<MetricFamily>& families) const;
  void Serialize(std::ostream& out, const std::vector<MetricFamily>& families) const;
};

// Value formatting used for samples and "le" labels: integral values as integers ("3"), others in
// the shortest form that reads back to the same double, "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

}  // namespace gpuaas::telemetry
