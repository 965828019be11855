#include "gpuaas/plugin/config.hpp"
#include "pod.hpp"

namespace gpuaas::pod {

Config Config::parse(const Json& config) {
  Config c;
  for (const auto& [key, value] : config.items()) {
    if (key == "gpu_util_threshold") {
      c.gpu_util_threshold = plugin::config_percentage(key, value);
    } else {
      plugin::config_unknown(key, "gpu_util_threshold");
    }
  }
  return c;
}

}  // namespace gpuaas::pod
