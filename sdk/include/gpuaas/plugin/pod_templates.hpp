// What admission and scaling do to pod templates, the same for every kind. Originals are kept on
// the object itself, in annotations, so that a suspend or a scale-back restores them even after a
// restart or a failover of the daemon.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "gpuaas/plugin/workload.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin {

// JSON of {pod spec pointer: {"nodeSelector": ..., "tolerations": ...}} before admission.
inline constexpr const char* kOriginalTemplatesAnnotation = "gpuaas.io/original-pod-templates";
// The ResourceFlavor the workload was admitted to.
inline constexpr const char* kFlavorAnnotation = "gpuaas.io/flavor";
// JSON of {pointer: value} of what scale-to-zero set to zero.
inline constexpr const char* kScaledFromAnnotation = "gpuaas.io/scaled-from";

// Admission as Kueue does it: merges the flavor's node labels into each template's
// spec.nodeSelector and appends its tolerations (those not already there). The originals are
// recorded first; a template admitted before is restored before the new flavor applies. With
// request.preferred_hostnames (placement.binding preferred) each template also gets a preferred
// node affinity (weight 100) on those kubernetes.io/hostname values; its affinity is recorded
// too and put back by restore_templates.
// Pointers name PodSpecs ("/spec/headGroupSpec/template/spec", or "/spec/predictor" where the
// kind inlines one). Throws InvalidInput.
void apply_flavor(Json& object, std::span<const std::string> pod_spec_pointers,
                  const v1::ActionRequest& request);
// Undoes apply_flavor from the annotation; without the annotation, leaves the object unchanged.
void restore_templates(Json& object);

// Sets each pointer to `zero`, recording the previous values (kept from an earlier call if the
// object is already scaled down). Absent pointers are recorded as absent.
void scale_to(Json& object, std::span<const std::string> pointers, const Json& zero);
// Restores what scale_to recorded; false when nothing was recorded.
bool scale_back(Json& object);

// A JSON pointer into the object, created on the way when `create` is set.
Json* locate(Json& object, const std::string& pointer, bool create);

// The object's metadata.annotations to edit, created empty when absent; InvalidInput when the
// metadata or the annotations are not an object.
Json& mutable_annotations(Json& object);
// Removes an annotation, and the map when that leaves it empty (an empty map would show in the
// merge patch); without annotations, no change. InvalidInput when they are not an object.
void erase_annotation(Json& object, std::string_view key);

}  // namespace gpuaas::plugin
