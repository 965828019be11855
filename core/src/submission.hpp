// What a tenant submits (<root>.v1.submissions.<ns>.<Kind>) is a request for a workload, never
// observed state: the object loses what only the cluster may say (its status, versions, owner,
// deletion), and its stated time is kept for display only. Private to gpuaas_core.
#pragma once

#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::core {

// The annotation that keeps the time a submission said it was made (display only).
inline constexpr const char* kSubmittedAtAnnotation = "gpuaas.io/submitted-at";

// The object JSON as the model may hold it: status, metadata.resourceVersion, uid,
// generation, creationTimestamp, deletionTimestamp, ownerReferences and managedFields removed,
// the stated time in kSubmittedAtAnnotation. An error when the JSON is not an object with
// metadata (the decoder, which runs after, gives the precise reasons for the rest).
Result<std::string> submitted_object(const std::string& text, wire::EventTime stated);

}  // namespace gpuaas::core
