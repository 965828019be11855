// What a served request must meet to count: latency percentiles, an error budget and a quality
// threshold. The capacity command reads them from flags or a ServiceObjective; gpuaasd from the
// ServiceObjective of each service.
#pragma once

#include <optional>
#include <string>

namespace gpuaas::capacity {

struct Objectives {
  // p95 bounds in seconds; an unset one is not checked.
  std::optional<double> ttft_p95;  // time to first token
  std::optional<double> tpot_p95;  // time per output token after the first
  std::optional<double> e2e_p95;   // the whole request
  double max_error_rate = 0.01;    // share of requests sent that may fail
  double min_quality = 0.99;       // share of answered requests that must pass the quality check
  // How sure a step must be that its p95s hold before a rate is called sustainable (one-sided).
  double confidence = 0.9;

  bool any_latency() const { return ttft_p95 || tpot_p95 || e2e_p95; }
};

// "p95 TTFT ≤ 400 ms, p95 TPOT ≤ 50 ms, errors ≤ 1%, quality ≥ 99%".
std::string describe(const Objectives& o);
// "400 ms", "1.5 s", "12.0 ms".
std::string format_seconds(double s);

}  // namespace gpuaas::capacity
