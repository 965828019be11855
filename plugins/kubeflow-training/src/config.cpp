#include <cstdint>

#include "gpuaas/plugin/config.hpp"
#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {

Config Config::parse(const Json& config) {
  Config c;
  for (const auto& [key, value] : config.items()) {
    if (key == "gpu_util_threshold") {
      c.gpu_util_threshold = plugin::config_percentage(key, value);
    } else if (key == "trainjob_trainer_job") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        throw plugin::InvalidInput("config/trainjob_trainer_job: want a replicated job name, got " +
                                   value.dump());
      }
      c.trainjob_trainer_job = value.get<std::string>();
    } else if (key == "trainjob_overrides") {
      if (value != "podSpecOverrides" && value != "podTemplateOverrides") {
        throw plugin::InvalidInput(
            "config/trainjob_overrides: want \"podSpecOverrides\" or \"podTemplateOverrides\", "
            "got " +
            value.dump());
      }
      c.trainjob_overrides = value.get<std::string>();
    } else {
      plugin::config_unknown(key, "gpu_util_threshold, trainjob_trainer_job, trainjob_overrides");
    }
  }
  return c;
}

}  // namespace gpuaas::kubeflow_training
