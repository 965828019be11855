// The policy set travels through the event stream as one object (a PolicySet), so a replay
// reloads it at the same point and decides the same.
#pragma once

#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::core {

inline constexpr const char* kPolicySetApiVersion = "gpuaas.io/v1alpha1";
inline constexpr const char* kPolicySetKind = "PolicySet";
inline constexpr const char* kPolicySetName = "active";

// Reads the policy files and validates them together. ok: the PolicySet object JSON to publish.
// Errors: one line each, FILE:LINE:COLUMN: message.
Result<std::string> policy_set_object(const std::vector<std::string>& files);

}  // namespace gpuaas::core
