// The search for the highest rate whose objectives hold: rates step up (doubling) until a step
// fails, then bisect between the last pass and the first failure; the answer is then confirmed
// on steps pooled at its rate, with the objectives' confidence, and lowered until it holds.
// Steps in the ramp and the bisection are judged on their point estimates (the p95 itself), so
// the bisection is not pushed down by one unlucky step; only the confirmed answer carries the
// confidence. Hardware and configuration are the caller's: the search only chooses rates.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpuaas/capacity/objectives.hpp"
#include "gpuaas/capacity/request_record.hpp"
#include "gpuaas/capacity/step_result.hpp"

namespace gpuaas::capacity {

struct SearchOptions {
  double start_rps = 1;
  double max_rps = 10000;
  double precision = 0.05;  // bisect until (failed - passed) / failed is at most this
  int confirm_steps = 3;    // steps pooled to confirm the answer
  int max_steps = 40;       // whatever happens, the search ends after this many steps
};

// One step's raw outcome, from whoever sends the load.
struct StepRun {
  double rate = 0, seconds = 0, warmup = 0;
  std::vector<RequestRecord> records;
  bool interrupted = false;
};
using StepRunner = std::function<StepRun(double rate)>;

struct SearchStep {
  std::string phase;  // "ramp", "bisect" or "confirm" (a confirmation pools every step at its rate)
  StepResult result;
};

struct SearchResult {
  std::vector<SearchStep> steps;
  double sustainable_rps = 0;
  // "bracketed": between a confirmed pass and a failure; "at_least": the highest rate tried
  // (max_rps) held; "unconfirmed": the search stopped early, this is the last rate that held;
  // "none": no rate held.
  std::string bound = "none";
  StepResult at_sustainable;  // the pooled confirmation at the answer (empty without one)
  bool interrupted = false;
  std::string stopped;  // why the search ended early, empty when it finished
};

using SearchProgress = std::function<void(const SearchStep&)>;

SearchResult find_capacity(const SearchOptions& options, const Objectives& objectives,
                           const StepRunner& run, const SearchProgress& progress = {});

}  // namespace gpuaas::capacity
