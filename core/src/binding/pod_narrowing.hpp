// How a gated pod is narrowed to one node, within what Kubernetes allows while a pod is gated
// (mutable scheduling directives, GA in 1.30): spec.nodeSelector may only gain keys, and the
// required node affinity may only gain requirements inside its existing terms (or be set when it
// has none). So the node's kubernetes.io/hostname label is added as a nodeSelector key when the
// pod has no required affinity, and as a requirement in every term when it has. Private to
// gpuaas_core.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuaas::core::binding {

inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

struct Narrowing {
  // The part of a merge patch on the pod's spec that narrows it ({} when it already is).
  nlohmann::json spec = nlohmann::json::object();
  // Why the pod cannot run on the node (it requires another host); empty when it can.
  std::string refused;
};

// `pod` is the Pod as the API server shows it; `hostname` the value of the node's
// kubernetes.io/hostname label, `node` its name (for matchFields on metadata.name).
Narrowing narrow_to_node(const nlohmann::json& pod, const std::string& hostname,
                         const std::string& node);

}  // namespace gpuaas::core::binding
