#include <cstdint>

#include "batch_job.hpp"
#include "gpuaas/plugin/config.hpp"

namespace gpuaas::batch_job {

Config Config::parse(const Json& config) {
  Config c;
  for (const auto& [key, value] : config.items()) {
    if (key == "gpu_util_threshold") {
      c.gpu_util_threshold = plugin::config_percentage(key, value);
    } else if (key == "partial_admission") {
      c.partial_admission = plugin::config_flag(key, value);
    } else {
      plugin::config_unknown(key, "gpu_util_threshold, partial_admission");
    }
  }
  return c;
}

int64_t int32_at(const Workload& w, const std::string& pointer, int64_t fallback) {
  int64_t n = w.count_at(pointer, fallback);
  if (n > INT32_MAX) {
    throw plugin::InvalidInput(pointer + ": " + std::to_string(n) +
                               " is above the Kubernetes int32 maximum 2147483647");
  }
  return n;
}

}  // namespace gpuaas::batch_job
