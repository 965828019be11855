// The plugin's configuration: every key is known, so a typo fails at create instead of being
// silently ignored.
#include <cmath>

#include "ray.hpp"

namespace gpuaas::ray {

Config Config::parse(const Json& config) {
  Config c;
  for (const auto& [key, value] : config.items()) {
    const std::string where = "plugin configuration: " + key;
    if (key == "gpu_util_threshold") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
          value.get<double>() > 100) {
        throw plugin::InvalidInput(where + ": want a percentage from 0 to 100, got " +
                                   value.dump());
      }
      c.gpu_util_threshold = value.get<double>();
    } else if (key == "ray_metrics") {
      if (!value.is_boolean()) throw plugin::InvalidInput(where + ": want true or false");
      c.ray_metrics = value.get<bool>();
    } else if (key == "ignored_tasks") {
      if (!value.is_array()) throw plugin::InvalidInput(where + ": want a list of task names");
      for (const auto& name : value) {
        if (!name.is_string()) throw plugin::InvalidInput(where + ": want a list of task names");
        c.ignored_tasks.push_back(name.get<std::string>());
      }
    } else {
      throw plugin::InvalidInput("plugin configuration: unknown key \"" + key +
                                 "\" (known: gpu_util_threshold, ray_metrics, ignored_tasks)");
    }
  }
  return c;
}

}  // namespace gpuaas::ray
