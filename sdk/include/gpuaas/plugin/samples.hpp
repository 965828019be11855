// Metric samples of a workload's pods, as the host passes them to activity().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuaas/v1/event.pb.h"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin {

class Samples {
 public:
  explicit Samples(const v1::MetricBatch& batch) : batch_(batch) {}
  const v1::MetricBatch& batch() const { return batch_; }
  auto begin() const { return batch_.samples().begin(); }
  auto end() const { return batch_.samples().end(); }
  bool empty() const { return batch_.samples_size() == 0; }

  // "" when the sample has no such label.
  static std::string_view label(const v1::MetricSample& s, std::string_view name);

 private:
  const v1::MetricBatch& batch_;
};

// Builders for activity() answers. `at_ms`: Unix milliseconds of the evidence (0: unknown).
v1::WorkloadActivity active(std::string evidence, int64_t at_ms);
v1::WorkloadActivity idle(std::string evidence);
v1::WorkloadActivity unknown_activity(std::string evidence);

// RFC 3339 ("2026-11-29T18:00:00Z", fractions allowed) to Unix milliseconds; nullopt-like -1
// when malformed.
int64_t parse_rfc3339_ms(std::string_view text);

}  // namespace gpuaas::plugin
