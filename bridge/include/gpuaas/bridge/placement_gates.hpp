// The placement gates the admission webhook adds to a new queued workload of a kind whose binding
// is required (the plugin's kind declaration, host::KindBinding): each pod template its demand
// names (gpuaas.v1.PodSet.template_pointer) gets the scheduling gate kPlacementGate and the label
// kPodSetLabel with the set's name. The operator then creates every pod behind the gate, and
// gpuaasd opens each one on the node it placed it on, finding its set by the label (as Kueue's
// topology-aware scheduling gates its pods). Serving and session kinds (binding preferred or off)
// and plain Pods (held by their own gate, no template) are left alone.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::host {
class PluginHost;
}

namespace gpuaas::bridge {

// The RFC 6902 operations, written against `object` as it is, that gate and label each template
// `demand` names (missing lists and maps added; a gate already there is not added again, a label
// already right left alone). Pod sets without a template are skipped. All or nothing: an error
// (invalid) when a template pointer is malformed or shared, a set's name is not a label value, or
// a template's shape forbids the gate (not an object, schedulingGates not a list).
Result<nlohmann::json> placement_gate_patch(const nlohmann::json& object,
                                            const v1::WorkloadDemand& demand);

struct TemplateGating {
  nlohmann::json patch = nlohmann::json::array();  // RFC 6902 operations (may be empty)
  std::string reason;  // what was gated, or why nothing was, for logs and tests
  std::string error;   // the templates of a required kind could not be gated: counted and logged
};

// Asks the plugin that claims apiVersion/kind whether its pods are bound (binding required) and, if
// so, for the object's demand; then placement_gate_patch. A failed demand is an `error`, never a
// refusal: the webhook admits the object with its hold only.
TemplateGating gate_pod_templates(const nlohmann::json& object, std::string_view api_version,
                                  std::string_view kind, host::PluginHost& plugins);

}  // namespace gpuaas::bridge
