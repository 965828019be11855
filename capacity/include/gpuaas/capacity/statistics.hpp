// Small statistics the load test and the passive estimate share.
#pragma once

#include <vector>

namespace gpuaas::capacity {

// The q-quantile (0..1) of `sorted` (ascending), interpolated between ranks; 0 when empty.
double quantile(const std::vector<double>& sorted, double q);

// z such that P(Z <= z) = p for a standard normal Z (0 < p < 1).
double normal_quantile(double p);

// The share of events and a one-sided upper bound on it at `confidence`, from batch means: the
// events grouped in consecutive batches, the bound is the mean plus z standard errors of the
// batch shares, and never below the bound for independent samples. `batches[i]` holds
// (events, samples) of batch i.
struct ShareBound {
  double share = 0;
  double upper = 0;
};
ShareBound share_upper_bound(const std::vector<std::pair<long, long>>& batches, double confidence);

}  // namespace gpuaas::capacity
