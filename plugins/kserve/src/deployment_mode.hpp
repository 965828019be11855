// Which KServe deployment mode an InferenceService runs in, which decides how it scales to zero.
#pragma once

#include <string>
#include <string_view>

#include "gpuaas/plugin/workload.hpp"

namespace gpuaas::kserve {

enum class DeploymentMode {
  kKnative,    // "Knative", formerly "Serverless": a Knative Service per component
  kStandard,   // "Standard", formerly "RawDeployment": Deployment + HPA/KEDA
  kModelMesh,  // "ModelMesh": pods belong to the shared ServingRuntime, not to the service
};

inline constexpr const char* kDeploymentModeAnnotation = "serving.kserve.io/deploymentMode";

// "Knative"/"Serverless", "Standard"/"RawDeployment", "ModelMesh"; InvalidInput naming `where`.
DeploymentMode parse_deployment_mode(std::string_view value, const std::string& where);

// As KServe decides it: the mode recorded in status.deploymentMode (fixed once the controller saw
// the object), else the annotation, else the cluster default.
DeploymentMode deployment_mode(const plugin::Workload& w, DeploymentMode cluster_default);

const char* to_string(DeploymentMode mode);

}  // namespace gpuaas::kserve
