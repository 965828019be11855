// Kubeflow Notebooks (kubeflow.org/v1 and v1beta1 share the fields used here): what the plugin
// reads and writes on them, and the functions behind each capability.
#pragma once

#include <string>

#include "gpuaas/plugin/sdk.hpp"

namespace gpuaas::workbench {

using plugin::Json;

// The notebook controller scales the notebook's StatefulSet to 0 while this annotation is
// present, and back to 1 when it is removed. Its value is an RFC 3339 time (when it stopped).
inline constexpr const char* kStopAnnotation = "kubeflow-resource-stopped";
// Written by the notebook controller's culler: the last time a kernel was seen busy.
inline constexpr const char* kLastActivityAnnotation = "notebooks.kubeflow.org/last-activity";
// The stop annotation's value when the ActionRequest carries no event time.
inline constexpr const char* kNoTimeStopValue = "1970-01-01T00:00:00Z";

// JSON pointers (RFC 6901: "/" inside a key is written "~1").
inline constexpr const char* kPodSpec = "/spec/template/spec";
inline constexpr const char* kStopPointer = "/metadata/annotations/kubeflow-resource-stopped";
inline constexpr const char* kLastActivityPointer =
    "/metadata/annotations/notebooks.kubeflow.org~1last-activity";
inline constexpr const char* kReadyReplicas = "/status/readyReplicas";

// Plugin configuration; unknown keys are rejected.
struct Config {
  double gpu_util_threshold = 5.0;  // percent; DCGM_FI_DEV_GPU_UTIL above it shows use

  static Config parse(const Json& config);  // throws InvalidInput
};

// The one pod of the notebook's StatefulSet (named after the notebook): "<name>-0".
std::string pod_name(const plugin::Workload& w);

v1::WorkloadDemand demand(const plugin::Workload& w);
v1::WorkloadLifecycle lifecycle(const plugin::Workload& w);

plugin::Patch admit(const plugin::Workload& w, const v1::ActionRequest& r);
plugin::Patch suspend(const plugin::Workload& w, const v1::ActionRequest& r);
plugin::Patch scale_to_zero(const plugin::Workload& w, const v1::ActionRequest& r);
plugin::Patch scale_back(const plugin::Workload& w, const v1::ActionRequest& r);

// The stop annotation's value for a request: its event time as RFC 3339 UTC (seconds), or
// kNoTimeStopValue when the request has none.
std::string stop_value(const v1::ActionRequest& r);

v1::WorkloadActivity activity(const plugin::Workload& w, const plugin::Samples& samples,
                              const Config& config);

}  // namespace gpuaas::workbench
