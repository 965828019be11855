#include <cmath>

#include "notebook.hpp"

namespace gpuaas::workbench {

Config Config::parse(const Json& config) {
  Config c;
  if (config.is_null()) return c;
  if (!config.is_object()) throw plugin::InvalidInput("config: not a JSON object");
  for (const auto& [key, value] : config.items()) {
    if (key == "gpu_util_threshold") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
          value.get<double>() > 100) {
        throw plugin::InvalidInput("config: gpu_util_threshold: want a percentage 0..100, got " +
                                   value.dump());
      }
      c.gpu_util_threshold = value.get<double>();
    } else {
      throw plugin::InvalidInput("config: unknown key \"" + key + "\" (known: gpu_util_threshold)");
    }
  }
  return c;
}

}  // namespace gpuaas::workbench
