// Actions as JSON merge patches (RFC 7386): the plugin edits a copy of the object, the SDK sends
// the difference. Custom resources take no strategic merge patch, so a changed list travels whole.
// An action may instead delete the object (Patch::remove).
#pragma once

#include <string>

#include "gpuaas/plugin/workload.hpp"

namespace gpuaas::plugin {

// Whether the patch must apply only to the version of the object it was computed from.
enum class Guard {
  kNone,             // the patch is right whatever else changed (an annotation, a flag)
  kResourceVersion,  // carries metadata.resourceVersion: a lost update would be wrong
};

// An RFC 7386 merge patch on the workload object, or its deletion. Empty: nothing to change.
struct Patch {
  Json body = Json::object();
  // Delete the object instead (body unused): what stops a kind that cannot be held again once
  // released, such as a Pod whose scheduling gate is gone.
  bool delete_object = false;
  bool empty() const { return !delete_object && body.empty(); }

  // The patch that turns the workload into `desired`; with kResourceVersion (and a non-empty
  // patch) it carries the object's metadata.resourceVersion.
  static Patch between(const Workload& w, const Json& desired, Guard guard);
  // Deletion of the workload object: the host sends a DELETE action with no body.
  static Patch remove();
};

// The merge patch that turns `from` into `to`: removed keys become null, changed non-objects
// (lists included) are replaced whole. A null inside `to` cannot be expressed and is dropped.
Json merge_diff(const Json& from, const Json& to);

// Applies a merge patch in place (RFC 7386), as the API server will.
void merge_apply(Json& target, const Json& patch);

}  // namespace gpuaas::plugin
