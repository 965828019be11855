// What the API server would refuse in an object gpuaasctl is about to publish, checked before
// anything is published, as Kubernetes validates: names by kind, labels, and resource
// quantities (extended resources such as nvidia.com/gpu whole, a request equal to its limit).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuaas::ctl {

// Every mistake of the object, each "FIELD: what is wrong"; empty when the API server would take
// it. The object has passed the manifest reader (apiVersion, kind and a name are strings).
std::vector<std::string> check_object(const nlohmann::json& object);

}  // namespace gpuaas::ctl
