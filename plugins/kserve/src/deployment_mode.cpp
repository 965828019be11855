#include "deployment_mode.hpp"

#include "annotations.hpp"
#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::kserve {

DeploymentMode parse_deployment_mode(std::string_view v, const std::string& where) {
  if (v == "Knative" || v == "Serverless") return DeploymentMode::kKnative;
  if (v == "Standard" || v == "RawDeployment") return DeploymentMode::kStandard;
  if (v == "ModelMesh") return DeploymentMode::kModelMesh;
  throw plugin::InvalidInput(where + ": unknown deployment mode \"" + std::string(v) +
                             "\" (want Knative, Serverless, Standard, RawDeployment or ModelMesh)");
}

DeploymentMode deployment_mode(const plugin::Workload& w, DeploymentMode cluster_default) {
  if (const auto* s = w.find("/status/deploymentMode");
      s != nullptr && s->is_string() && !s->get<std::string>().empty()) {
    return parse_deployment_mode(s->get<std::string>(), "/status/deploymentMode");
  }
  std::string a = w.annotation(kDeploymentModeAnnotation);
  if (!a.empty()) {
    return parse_deployment_mode(a, annotation_pointer(kDeploymentModeAnnotation));
  }
  return cluster_default;
}

const char* to_string(DeploymentMode mode) {
  switch (mode) {
    case DeploymentMode::kKnative:
      return "Knative";
    case DeploymentMode::kStandard:
      return "Standard";
    case DeploymentMode::kModelMesh:
      return "ModelMesh";
  }
  return "?";
}

}  // namespace gpuaas::kserve
