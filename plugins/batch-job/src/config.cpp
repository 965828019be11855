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

}  // namespace gpuaas::batch_job
