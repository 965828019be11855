// A step of a load test summarised: the rate held, latency percentiles, errors, quality and
// whether the objectives held.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuaas/capacity/objectives.hpp"
#include "gpuaas/capacity/request_record.hpp"

namespace gpuaas::capacity {

struct Percentiles {
  int64_t count = 0;  // samples
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
  // The share of samples above the objective and its one-sided upper bound at the objectives'
  // confidence (batch means over the step, so bursts of slow requests are not taken for
  // independent samples); 0 without an objective.
  double above = 0, above_upper = 0;
};

struct StepResult {
  double rate = 0;     // requests per second asked for
  double seconds = 0;  // how long arrivals were sent
  double warmup = 0;   // seconds at the start whose requests are not measured
  int64_t sent = 0;    // measured requests sent
  int64_t answered = 0;
  int64_t errors = 0;
  int64_t quality_passed = 0;    // of the answered
  int64_t within_objective = 0;  // answered, quality passed, each latency within its objective
  Percentiles ttft, tpot, e2e;   // seconds, over answered requests
  double error_rate = 0;
  double quality_pass_rate = 0;  // quality_passed / answered (1 when nothing was answered)
  double achieved_rps = 0;       // answered per measured second
  double tokens_per_second = 0;  // prompt and completion tokens of the answered
  double output_tokens_per_second = 0;
  bool pass = false;
  std::vector<std::string> failed;             // why not, one line per objective missed
  std::map<std::string, int64_t> error_kinds;  // "HTTP 500", "stalled", "connection refused"...
  std::string first_error;
  bool interrupted = false;  // stopped by the user before its end
  bool server_down = false;  // not one request reached the server

  // Requests each sample set is built from, kept for pooling repeated steps at one rate.
  std::vector<RequestRecord> records;
};

// Summarises the requests of one step against the objectives. Requests sent in the first
// `warmup` seconds are not measured (the server starts each step empty).
StepResult summarize_step(double rate, double seconds, double warmup,
                          std::vector<RequestRecord> records, const Objectives& objectives);

// The first word of an error ("HTTP 500", "stalled", ...), for error_kinds.
std::string error_kind(const std::string& error);

}  // namespace gpuaas::capacity
