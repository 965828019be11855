// The parts of an InferenceService that run pods: the predictor, and the transformer and explainer
// when present. Each inlines a PodSpec (nodeSelector, tolerations, containers, ...) beside
// KServe's own fields; the model server container is given apart from `containers`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuaas/plugin/workload.hpp"

namespace gpuaas::kserve {

struct Component {
  std::string name;     // "predictor", "transformer", "explainer"
  std::string pointer;  // "/spec/predictor": the inline PodSpec and the replica bounds
};

// The components present; InvalidInput when the predictor is missing or one is not an object.
std::vector<Component> components(const plugin::Workload& w);
// Their inline PodSpec pointers, for apply_flavor.
std::vector<std::string> pod_spec_pointers(const plugin::Workload& w);

// The PodSpec KServe builds for a component: the inline spec with the model server container
// (spec.predictor.model, a framework key such as sklearn or huggingface, or an explainer's art)
// appended to `containers`. `model_index` is that container's index in the result (-1: none,
// a custom component whose containers are all in `containers`) and `model_pointer` where it is
// in the object, so that messages name the real place.
struct PodSpecView {
  plugin::Json spec;
  int model_index = -1;
  std::string model_pointer;
};
PodSpecView pod_spec(const plugin::Workload& w, const Component& c);

// minReplicas as the owner set it: the value scale-to-zero recorded when it set 0, else the
// object's; KServe's default is 1. InvalidInput unless 0..2^31-1.
int64_t min_replicas(const plugin::Workload& w, const Component& c);
// maxReplicas (0: unbounded); InvalidInput unless 0..2^31-1 and, when set, >= minReplicas.
int64_t max_replicas(const plugin::Workload& w, const Component& c);

// An int32 field of Kubernetes: `fallback` when absent, InvalidInput unless 0..2^31-1.
int64_t int32_at(const plugin::Workload& w, const std::string& pointer, int64_t fallback);

}  // namespace gpuaas::kserve
