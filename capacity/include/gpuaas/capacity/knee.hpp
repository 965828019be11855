// Capacity from production metrics: a running service's series cut into windows (per replica),
// each window's request rate and latency percentiles from its histograms' increase; the
// sustainable rate per replica is the knee, the rate that best separates the windows that met
// the objectives from those that did not.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpuaas/capacity/objectives.hpp"

namespace gpuaas::capacity {

// The q-quantile of a histogram's increase over a window, as PromQL's histogram_quantile does
// it: `buckets` are (le, cumulative count), any order, +Inf included or not; linear within the
// bucket; the highest finite bound when the quantile falls in +Inf; -1 without observations.
double histogram_quantile(std::vector<std::pair<double, double>> buckets, double q);

struct Window {
  double start = 0, end = 0;                          // seconds
  double requests = 0;                                // finished in the window
  double rate = 0;                                    // requests per second
  double ttft_p95 = -1, tpot_p95 = -1, e2e_p95 = -1;  // -1: not known
  double error_rate = 0;                              // of the finished, those that failed
  double quality = 1;   // of the finished, those that passed the quality signal
  double waiting = -1;  // requests queued at the window's end (-1: not known)
};

// Whether a window met the objectives; `why` (may be null) says which it missed.
bool window_meets(const Window& w, const Objectives& o, std::string* why = nullptr);

struct KneeEstimate {
  double sustainable_rps = 0;  // per replica
  // "bracketed": windows met the objectives below it and missed them above; "at_least": every
  // window met them (the service was never pushed to its limit); "at_most": none did; "none": too
  // few windows.
  std::string bound = "none";
  double confidence = 0;  // 0..1: how well the knee separates the windows, and how many back it
  int windows = 0, meeting = 0, missing = 0;
  double agreement = 0;  // share of windows on the side of the knee they belong to
  double highest_rate = 0;
};

// Windows with fewer than `min_requests` requests are left out: their percentiles are noise.
KneeEstimate estimate_knee(const std::vector<Window>& windows, const Objectives& o,
                           double min_requests = 20, int min_windows = 5);

}  // namespace gpuaas::capacity
