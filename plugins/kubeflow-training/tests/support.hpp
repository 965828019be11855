// Shared by the kubeflow-training tests: the plugin's entry point and small object helpers.
#pragma once

#include <string>

#include "gpuaas/plugin/sdk.hpp"
#include "gpuaas/plugin/testing.hpp"

extern "C" const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

namespace kft_test {

using gpuaas::plugin::Json;

inline std::string manifest(const std::string& relative) {
  // Appended piecewise: GCC 12 warns (-Warray-bounds, falsely) on the chained operator+.
  std::string path(GPUAAS_SHARED_DIR);
  path.append("/manifests/").append(relative);
  return path;
}

inline Json load(const std::string& relative, std::string_view kind, std::string_view name = {}) {
  return Json::parse(gpuaas::plugin::testing::load_manifest(manifest(relative), kind, name));
}

// The pointer of the suspend flag of the object's kind.
inline std::string suspend_pointer(const Json& o) {
  return o["kind"] == "TrainJob" ? "/spec/suspend" : "/spec/runPolicy/suspend";
}

// The object as a queue sees it on creation: suspended (Kueue's webhook sets the flag) and at a
// known resourceVersion.
inline Json queued(Json o) {
  o[Json::json_pointer(suspend_pointer(o))] = true;
  o["metadata"]["resourceVersion"] = "41";
  return o;
}

// An ADMIT request for a flavor with one node label and one toleration.
inline gpuaas::v1::ActionRequest flavor_request() {
  gpuaas::v1::ActionRequest r;
  (*r.mutable_node_labels())["gpu.pool"] = "a100";
  r.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
  r.set_flavor("a100");
  r.set_reason("admitted by ClusterQueue team-a");
  return r;
}

}  // namespace kft_test
