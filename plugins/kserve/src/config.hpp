// The plugin's configuration: thresholds for activity and the cluster's default deployment mode.
#pragma once

#include "deployment_mode.hpp"
#include "gpuaas/plugin/workload.hpp"

namespace gpuaas::kserve {

struct Config {
  // DCGM_FI_DEV_GPU_UTIL above this (percent) counts as use.
  double gpu_util_threshold = 5.0;
  // Mode of an InferenceService that names none. KServe takes it from the cluster's
  // inferenceservice-config ConfigMap, which a plugin cannot see; its Helm chart installs Knative.
  DeploymentMode default_mode = DeploymentMode::kKnative;
};

// Reads the configuration JSON ({} for the defaults); InvalidInput for unknown keys or wrong types.
Config parse_config(const plugin::Json& json);

}  // namespace gpuaas::kserve
