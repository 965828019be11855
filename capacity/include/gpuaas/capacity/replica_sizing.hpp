// Replicas a service's demand needs at its objective, within its quota: the forecast rate over
// what one replica sustains with headroom. The answer is the bounds KServe's autoscaler reads
// (scaleTarget per replica, minReplicas, maxReplicas), not a replica count: the autoscaler follows
// the requests between the bounds, second by second, and gpuaas keeps the bounds honest.
#pragma once

#include <string>

namespace gpuaas::capacity {

struct SizingInput {
  double observed_rps = 0;     // the last window's rate
  double forecast_rps = 0;     // the rate expected by the time a new replica serves
  double per_replica_rps = 0;  // sustainable at the objective (a capacity report or the knee)
  double headroom = 0.2;       // 0..0.9: the share of that rate kept free for bursts
  int max_by_quota = -1;       // replicas the quota and fair share allow (-1: no limit known)
  bool idle = false;           // the idle rules would have it at zero
  // KServe's scaleTarget is an integer: the target is then a whole number, the nearest unless
  // that is above the sustainable rate (rounding down alone took 3 from 3.99, a quarter less).
  bool whole_target = false;
  std::string objective;  // for the reason ("p95 TTFT 400ms")
};

struct Sizing {
  double forecast_rps = 0;  // the input's, for the record
  double scale_target = 0;  // requests per second per replica: KServe's scaleTarget (rps)
  int needed = 0;           // replicas the forecast needs at that target
  int min_replicas = 0;     // 0 when idle, else the forecast's need (within the cap)
  // The cap by quota, or the burst room (4 x the need + 4) when that is lower; at least
  // min_replicas, at least 1.
  int max_replicas = 0;
  bool capped = false;  // the forecast needs more than the quota allows
  std::string why;      // "demand 34 req/s, forecast 41, 12 req/s per replica at ..."
};

// Without a per-replica rate (nothing measured yet) the bounds are left to the autoscaler:
// needed 0, min 0 when idle else 1, max the cap, and the reason says so.
Sizing size_replicas(const SizingInput& in);

}  // namespace gpuaas::capacity
