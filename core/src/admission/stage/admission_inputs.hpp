// The cluster model's objects as the admission engine's inputs: nodes, workloads (from their
// plugin's demand and lifecycle) and the annotations gpuaas reads. Private to gpuaas_core.
#pragma once

#include <optional>
#include <string>

#include "gpuaas/admission/node_index.hpp"
#include "gpuaas/admission/workload.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::core {

inline constexpr const char* kDeadlineAnnotation = "gpuaas.io/deadline";
// Kueue's label naming the LocalQueue: an object with it is meant for the queue.
inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kExpectedDurationAnnotation = "gpuaas.io/expected-duration";
inline constexpr const char* kPlacementAnnotation = "gpuaas.io/placement";

admission::Amounts to_amounts(const ResourceList& list, admission::NameIndex& resources);

admission::NodeInfo node_info(const KubeObject& node, const ResourceList& used_by_others,
                              admission::NameIndex& resources);

// nullopt: the object does not name a queue (Kueue leaves such workloads alone) or its plugin
// gave no demand. `error` gets what was wrong with its gpuaas.io annotations, if anything (the
// workload is still queued, without the bad value).
std::optional<admission::WorkloadInfo> workload_info(const KubeObject& object,
                                                     const WorkloadView& view, bool admitted,
                                                     admission::Time created,
                                                     admission::NameIndex& resources,
                                                     std::string* error);

// The engine keeps event time in milliseconds.
inline admission::Time to_time(wire::EventTime t) {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(t);
}
inline wire::EventTime to_event_time(admission::Time t) {
  return wire::EventTime(t.time_since_epoch());
}

// RFC 3339 ("2026-11-29T16:03:23Z", fractions and offsets allowed) -> milliseconds since epoch.
std::optional<admission::Time> parse_rfc3339(std::string_view text);

}  // namespace gpuaas::core
