// Helpers shared by the kserve plugin's tests: the sample manifests and small InferenceServices.
#pragma once

#include <string>

#include "gpuaas/plugin/abi.h"
#include "gpuaas/plugin/pod_set.hpp"
#include "gpuaas/plugin/testing.hpp"
#include "gpuaas/plugin/workload.hpp"

// Defined by GPUAAS_PLUGIN in src/plugin.cpp.
extern "C" const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

namespace kserve_test {

using gpuaas::plugin::Json;

inline std::string manifest_path(const std::string& file) {
  // Appended in place: GCC 12 warns (falsely) about operator+ on a temporary here.
  std::string path = GPUAAS_SHARED_DIR;
  path.append("/manifests/kserve/").append(file);
  return path;
}

// The InferenceService of a published sample, as JSON.
inline Json sample(const std::string& file) {
  return Json::parse(
      gpuaas::plugin::testing::load_manifest(manifest_path(file), "InferenceService"));
}

// An InferenceService in namespace "ns" with the given spec (and annotations).
inline Json isvc(Json spec, Json annotations = nullptr, std::string name = "svc") {
  Json o = {{"apiVersion", "serving.kserve.io/v1beta1"},
            {"kind", "InferenceService"},
            {"metadata", {{"name", name}, {"namespace", "ns"}, {"resourceVersion", "7"}}},
            {"spec", std::move(spec)}};
  if (!annotations.is_null()) o["metadata"]["annotations"] = std::move(annotations);
  return o;
}

// A predictor with a model spec asking for `resources`.
inline Json model_predictor(Json resources) {
  return {{"model",
           {{"modelFormat", {{"name", "huggingface"}}},
            {"storageUri", "hf://x/y"},
            {"resources", std::move(resources)}}}};
}

inline int64_t milli(const gpuaas::v1::PodSet& set, const std::string& resource) {
  return gpuaas::plugin::per_pod_milli(set, resource);
}

constexpr int64_t kGi = int64_t{1} << 30;

}  // namespace kserve_test
