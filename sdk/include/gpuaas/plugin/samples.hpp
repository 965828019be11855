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
  // The pod and namespace a sample is about ("" when it names none). When Prometheus's target
  // labels (the exporter's own pod and namespace) take the names pod and namespace, the labels the
  // exporter wrote become exported_pod / exported_namespace, so those win when present.
  static std::string_view pod(const v1::MetricSample& s);
  static std::string_view namespace_(const v1::MetricSample& s);
  // The sample's series: its name and labels in label order, equal for every scrape of one series
  // whatever order the labels came in (to compare a counter's samples).
  static std::string series_key(const v1::MetricSample& s);

 private:
  const v1::MetricBatch& batch_;
};

// Whether a counter counted something between two samples of its series: it rose, or it was
// reset (its process restarted) and counted again since.
inline bool counter_rose(double before, double after) {
  return after > before || (after < before && after > 0);
}

// How evidence text shows a number.
enum class NumberStyle {
  kSignificant,  // six significant digits, like printf's %g: 80, 12.5, 1.5e+06
  kDecimal,      // six decimals with trailing zeros dropped, never an exponent: 80, 12.5, 1500000
                 // (every digit of a large counter shows, so a rise of one stays visible)
};
std::string format_number(double v, NumberStyle style = NumberStyle::kSignificant);

// Builders for activity() answers. `at_ms`, `last_active_ms`: Unix milliseconds of the evidence
// (0: unknown; left unset in the answer).
v1::WorkloadActivity active(std::string evidence, int64_t at_ms);
v1::WorkloadActivity idle(std::string evidence, int64_t last_active_ms = 0);
v1::WorkloadActivity unknown_activity(std::string evidence);

// RFC 3339 ("2026-11-29T18:00:00Z", fractions allowed) to Unix milliseconds; nullopt-like -1
// when malformed.
int64_t parse_rfc3339_ms(std::string_view text);

}  // namespace gpuaas::plugin
