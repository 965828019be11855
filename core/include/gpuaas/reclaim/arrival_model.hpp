// Idle timeouts learned from each inference service's request arrivals, so that a set of services
// keeps at least as many GPU-seconds at zero as Knative's default scale-to-zero (stable window
// 60 s + grace 30 s = 90 s idle) with no more cold starts. Pure: no clock, no I/O; time is the
// event time of the arrivals.
//
// For a service with inter-arrival gaps g_i, an idle timeout T costs sum_i min(g_i, T)
// GPU-seconds kept warm plus lambda per cold start (#{g_i > T}; a request that finds the service
// at zero). That cost is piecewise linear in T with its minimum at min_timeout or just above one
// of the gaps, so ArrivalModel::timeout evaluates those candidates (gap + resolution, clamped to
// [min_timeout, max_timeout]). For exponential gaps with mean m it sends services with m > lambda
// to zero at once and keeps those with m < lambda warm: it exploits the difference between
// services, where Knative gives every service the same 90 s.
//
// lambda (GPU-seconds a cold start is worth) is shared by the services of one policy and
// calibrated online against Knative by ColdStartBudget: each gap counts a cold start for us if it
// outlasted the timeout in force, and for the reference if it outlasted knative_timeout.
// Calibration rule: a plain sign rule on the cumulative counts (lambda x1.5 while ours exceed the
// reference, /1.1 while below) swung lambda between 5 s and 3600 s, since the counts lag lambda
// by hundreds of gaps, and a time mix of extreme lambdas kept only 80% of Knative's zero-seconds
// on the population test. So each gap moves log(lambda) by +-0.05 when it was a cold start for one
// policy only (a stochastic-approximation step that settles lambda where both cold-start rates
// match), plus +-0.002 by the sign of (ours - 0.98 x reference) to repay what the transient cost
// and end a little below the reference. On the test's workload (30 Poisson services) that keeps
// 109-116% of Knative's zero-seconds with ~2% fewer cold starts (seeds 0-19 and 42).
//
// gpuaasd itself prices cold starts at the policy's idle.coldStartCost (min = max lambda): on
// arrivals read from scraped counters the online calibration swung too much (docs/idle-reclaim.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace gpuaas::core::reclaim {

using Millis = std::chrono::milliseconds;
using Time = std::chrono::sys_time<Millis>;

struct ArrivalSettings {
  Millis knative_timeout{std::chrono::seconds(90)};  // the reference: stable window + grace
  Millis min_timeout{std::chrono::seconds(10)};      // never sooner (a metric scrape or two)
  Millis max_timeout{std::chrono::minutes(30)};
  Millis resolution{std::chrono::seconds(1)};  // a candidate is a gap plus this
  std::size_t history = 64;                    // gaps kept per service (the newest)
  std::size_t min_gaps = 4;                    // fewer: knative_timeout
  double min_lambda_seconds = 1;
  double max_lambda_seconds = 3600;
};

// Snapshots (gpuaas/base/archive.hpp): every field, since a budget or model is rebuilt from them.
template <typename A>
void archive_fields(A& a, ArrivalSettings& s) {
  a(s.knative_timeout, s.min_timeout, s.max_timeout, s.resolution, s.history, s.min_gaps,
    s.min_lambda_seconds, s.max_lambda_seconds);
}

// One policy's cold-start budget, shared by its services.
class ColdStartBudget {
 public:
  explicit ColdStartBudget(const ArrivalSettings& s = {});
  // A gap ended: `timeout` was in force for the service during it. `weight`: what one cold
  // start of this service costs in cold requests (a busy service gets several requests while it
  // wakes); both counts are weighted alike, so the budget compares cold requests.
  void record_gap(Millis gap, Millis timeout, double weight = 1);
  double lambda_seconds() const;
  uint64_t cold_starts() const;            // ours, counted from gaps
  uint64_t reference_cold_starts() const;  // Knative's on the same gaps

  template <typename A>
  friend void archive_fields(A& a, ColdStartBudget& b) {
    a(b.settings_, b.lambda_seconds_, b.cold_starts_, b.reference_cold_starts_, b.weighted_,
      b.weighted_reference_);
  }

 private:
  ArrivalSettings settings_;
  double lambda_seconds_;
  uint64_t cold_starts_ = 0;
  uint64_t reference_cold_starts_ = 0;
  double weighted_ = 0;            // ours, weighted
  double weighted_reference_ = 0;  // Knative's, weighted
};

// One service's arrivals.
class ArrivalModel {
 public:
  explicit ArrivalModel(const ArrivalSettings& s = {});
  // A request (or a burst of them) was seen at t; earlier-or-equal times than the last are
  // ignored. Returns the gap it closed (nullopt for the first arrival or an ignored one).
  std::optional<Millis> observe(Time t);
  std::optional<Time> last_arrival() const;
  // The next arrival starts a new chain: the gap across a wake is start-up, not the service's
  // arrival pattern (and would count a phantom cold start for both policies).
  void restart() { last_.reset(); }
  std::size_t gaps() const;
  // The idle timeout for this service given lambda (seconds) and the weight of its cold starts;
  // knative_timeout until min_gaps gaps.
  Millis timeout(double lambda_seconds, double weight = 1) const;
  // The median of the gaps kept, or nullopt without any.
  std::optional<Millis> median_gap() const;

  template <typename A>
  friend void archive_fields(A& a, ArrivalModel& m) {
    a(m.settings_, m.last_, m.gaps_);
  }

 private:
  ArrivalSettings settings_;
  std::optional<Time> last_;
  std::deque<Millis> gaps_;  // the newest `history`, oldest first
};

}  // namespace gpuaas::core::reclaim
