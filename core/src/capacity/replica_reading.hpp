// What one serving replica's metrics say, as the latest samples of its series (cumulative
// counters and histograms, a Prometheus scrape's view), and what happened between two readings.
// The series are named by the service's ServiceObjective (vLLM's names by default). Private to
// gpuaas_core.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/core/metric_store.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::core::serving {

using Buckets = std::vector<std::pair<double, double>>;  // (le, cumulative count), by le

struct ReplicaReading {
  wire::EventTime at{};       // the oldest of its series' latest samples
  bool has_requests = false;  // the requests counter was seen: the pod serves
  double finished = 0;        // requests finished, any reason
  double good = 0;            // of them, passing the quality signal (or evaluator passes)
  double evaluated = 0;       // kMetric: answers the evaluator judged
  double errors = 0;          // finished with an error reason
  Buckets ttft, tpot, e2e;
  double waiting = -1;  // -1: not exported
};

// The pod's latest samples read against the objective's metric names.
ReplicaReading read_replica(const MetricStore& store, std::string_view ns, std::string_view pod,
                            const policy::ServiceObjective& objective);

// Between two readings of one replica. A counter that went down was reset (the replica
// restarted): the later reading is taken as the whole increase.
struct Interval {
  double seconds = 0;
  double requests = 0, good = 0, evaluated = 0, errors = 0;
  Buckets ttft, tpot, e2e;  // increases per le
  double waiting = -1;
};
Interval between(const ReplicaReading& before, const ReplicaReading& after);
void add(Interval& into, const Interval& more);

// Requests of an interval within the objective's latencies: per-request histograms (TTFT, end
// to end) count at the largest bound at or below the objective; the smaller of the two is taken
// (an upper bound of both at once). TPOT is per token: the share of tokens within it scales the
// count. Then the quality share: independent of latency, by assumption (docs/capacity.md).
double within_objective(const Interval& i, const policy::ServiceObjective& o);
// The share of answers that passed the quality signal (1 without one, or with no answer).
double quality_share(const Interval& i, const policy::ServiceObjective& o);

}  // namespace gpuaas::core::serving
