#include "gpuaas/sim/run_result.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpuaas::sim {

double WaitStats::mean() const {
  if (samples.empty()) return 0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double WaitStats::percentile(double p) const {
  if (samples.empty()) return 0;
  std::vector<double> s = samples;
  std::sort(s.begin(), s.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(s.size())));
  return s[std::clamp<std::size_t>(rank, 1, s.size()) - 1];
}

double RunResult::gpu_allocation_rate() const {
  return capacity_gpu_seconds > 0 ? allocated_gpu_seconds / capacity_gpu_seconds : 0;
}
double RunResult::gpu_utilization() const {
  return allocated_gpu_seconds > 0 ? busy_gpu_seconds / allocated_gpu_seconds : 0;
}
std::optional<double> RunResult::cost_per_outcome() const {
  if (outcomes == 0) return std::nullopt;
  return cost / static_cast<double>(outcomes);
}

}  // namespace gpuaas::sim
