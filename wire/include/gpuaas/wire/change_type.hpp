// What happened to a Kubernetes object, as a watch reports it (ADDED, MODIFIED, DELETED).
#pragma once

namespace gpuaas::wire {

enum class ChangeType { kAdded, kModified, kDeleted };

}  // namespace gpuaas::wire
