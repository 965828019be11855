#include "config.hpp"

#include <string>

#include "gpuaas/plugin/config.hpp"
#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::kserve {

Config parse_config(const plugin::Json& json) {
  Config c;
  for (const auto& [key, value] : json.items()) {
    if (key == "gpu_util_threshold") {
      c.gpu_util_threshold = plugin::config_percentage(key, value);
    } else if (key == "default_deployment_mode") {
      if (!value.is_string()) {
        throw plugin::InvalidInput("config: default_deployment_mode: want a string, got " +
                                   value.dump());
      }
      c.default_mode =
          parse_deployment_mode(value.get<std::string>(), "config: default_deployment_mode");
    } else {
      plugin::config_unknown(key, "gpu_util_threshold, default_deployment_mode");
    }
  }
  return c;
}

}  // namespace gpuaas::kserve
