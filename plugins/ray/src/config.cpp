// The plugin's configuration: every key is known, so a typo fails at create instead of being
// silently ignored.

#include "gpuaas/plugin/config.hpp"
#include "ray.hpp"

namespace gpuaas::ray {

Config Config::parse(const Json& config) {
  Config c;
  for (const auto& [key, value] : config.items()) {
    const std::string where = "plugin configuration: " + key;
    if (key == "gpu_util_threshold") {
      c.gpu_util_threshold = plugin::config_percentage(key, value);
    } else if (key == "ray_metrics") {
      c.ray_metrics = plugin::config_flag(key, value);
    } else if (key == "ignored_tasks") {
      if (!value.is_array()) throw plugin::InvalidInput(where + ": want a list of task names");
      for (const auto& name : value) {
        if (!name.is_string()) throw plugin::InvalidInput(where + ": want a list of task names");
        c.ignored_tasks.push_back(name.get<std::string>());
      }
    } else {
      plugin::config_unknown(key, "gpu_util_threshold, ray_metrics, ignored_tasks");
    }
  }
  return c;
}

}  // namespace gpuaas::ray
