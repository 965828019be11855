#include "config.hpp"

#include <string>

#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::kserve {

Config parse_config(const plugin::Json& json) {
  Config c;
  if (!json.is_object()) throw plugin::InvalidInput("config: not a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (key == "gpu_util_threshold") {
      if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 100) {
        throw plugin::InvalidInput("config: gpu_util_threshold: want a percentage 0..100, got " +
                                   value.dump());
      }
      c.gpu_util_threshold = value.get<double>();
    } else if (key == "default_deployment_mode") {
      if (!value.is_string()) {
        throw plugin::InvalidInput("config: default_deployment_mode: want a string, got " +
                                   value.dump());
      }
      c.default_mode =
          parse_deployment_mode(value.get<std::string>(), "config: default_deployment_mode");
    } else {
      throw plugin::InvalidInput("config: unknown key \"" + key +
                                 "\" (known: gpu_util_threshold, default_deployment_mode)");
    }
  }
  return c;
}

}  // namespace gpuaas::kserve
