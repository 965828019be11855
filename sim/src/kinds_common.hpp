// What the kind models share: the metadata and containers a user writes, the pods an operator
// derives from a pod spec, status conditions. Internal to the kinds_*.cpp files.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpuaas/sim/kind_model.hpp"

namespace gpuaas::sim::kinds {

using nlohmann::json;

inline constexpr const char* kGpu = "nvidia.com/gpu";
inline constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kPriorityLabel = "kueue.x-k8s.io/priority-class";

// Throws std::invalid_argument naming the spec when its pod count is below `min` (or, with
// `exact`, is not `min`): a kind that cannot express the count must not silently change it.
void require_pods(const WorkloadSpec& spec, int32_t min, bool exact = false);

// apiVersion, kind and metadata (name, namespace, Kueue labels, the spec's annotations).
json object_head(const WorkloadSpec& spec, std::string_view api_version, std::string_view kind);

// A container with the spec's per-pod requests and limits (equal, as for Guaranteed pods, so
// that any reader, requests first or limits first, sees the same amounts).
json container(std::string_view name, std::string_view image, const WorkloadSpec& spec);
// Requests and limits of cpu and memory only (GPU-less pods such as a Ray head).
json resources(int64_t gpu_milli, int64_t cpu_milli, int64_t memory_bytes);

// The pods of one pod set from a PodSpec as it is now: per-pod resources summed over its
// containers (a request, else the limit, as the API server defaults it) plus `extra`
// containers that the operator adds (KServe's model container), and the spec's nodeSelector.
PodShape shape_of(std::string pod_set, int32_t count, const json& pod_spec,
                  const json& extra_containers = json::array());

// The value at an RFC 6901 pointer, nullptr when absent.
const json* find(const json& object, std::string_view pointer);
// A boolean at `pointer`, `fallback` when absent or not a boolean.
bool flag(const json& object, std::string_view pointer, bool fallback);
// An integer at `pointer`, `fallback` when absent or not an integer.
int64_t integer(const json& object, std::string_view pointer, int64_t fallback);
// An annotation's value, "" when absent.
std::string annotation(const json& object, std::string_view key);

// One status condition. No lastTransitionTime: set_phase is not told the time, and no plugin
// reads it.
json condition(std::string_view type, bool status, std::string_view reason,
               std::string_view message = "");
// A condition of `status.conditions` that is "True".
bool condition_true(const json& object, std::string_view type);
// Stand-in for the time an operator would write (startTime): the object's creationTimestamp,
// which the simulator sets, else the epoch. Only its presence matters to the plugins.
std::string stamp(const json& object);

[[noreturn]] void no_such_phase(std::string_view kind, Phase phase);

// The models, one per kind, defined in the kinds_*.cpp files.
const KindModel& pytorch_job_model();
const KindModel& ray_cluster_model();
const KindModel& ray_job_model();
const KindModel& inference_service_model();
const KindModel& notebook_model();
const KindModel& batch_job_model();

}  // namespace gpuaas::sim::kinds
