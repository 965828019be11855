// Helpers shared by the workbench plugin's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "gpuaas/plugin/abi.h"
#include "gpuaas/plugin/pod_set.hpp"
#include "gpuaas/plugin/testing.hpp"
#include "gpuaas/v1/plugin.pb.h"
#include "nlohmann/json.hpp"

// Defined by GPUAAS_PLUGIN in the plugin's objects.
extern "C" const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

namespace workbench_test {

using Json = nlohmann::json;
using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;
namespace v1 = gpuaas::v1;

inline std::string manifest(const std::string& relative) {
  std::string path = GPUAAS_SHARED_DIR;
  path.append("/manifests/").append(relative);
  return path;
}

// The Notebook of a sample manifest file, as JSON.
inline Json sample(const std::string& relative) {
  return Json::parse(gpuaas::plugin::testing::load_manifest(manifest(relative), "Notebook"));
}

// A minimal notebook whose pod spec is `pod_spec`.
inline Json notebook(const Json& pod_spec) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "Notebook"},
          {"metadata", {{"name", "nb"}, {"namespace", "team-a"}, {"resourceVersion", "41"}}},
          {"spec", {{"template", {{"spec", pod_spec}}}}}};
}

// One container with the given resources block.
inline Json with_resources(const Json& resources) {
  return notebook(
      {{"containers",
        Json::array({{{"name", "nb"}, {"image", "jupyter"}, {"resources", resources}}})}});
}

// An admission to a flavor with node labels and a toleration, at a fixed event time.
inline v1::ActionRequest flavor_request(int64_t seconds = 1764439200) {
  v1::ActionRequest r;
  (*r.mutable_node_labels())["gpu.pool"] = "a100";
  r.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
  r.set_flavor("a100");
  r.set_reason("admitted by ClusterQueue team-a");
  r.mutable_time()->set_seconds(seconds);
  return r;
}

inline v1::ActionRequest at(int64_t seconds) {
  v1::ActionRequest r;
  r.mutable_time()->set_seconds(seconds);
  return r;
}

inline int64_t milli(const v1::PodSet& set, const std::string& resource) {
  return gpuaas::plugin::per_pod_milli(set, resource);
}

// The one patch body of an action set (which must hold exactly one action).
inline Json body(const v1::ActionSet& set) {
  EXPECT_EQ(set.actions_size(), 1);
  return set.actions_size() == 1 ? Json::parse(set.actions(0).body_json()) : Json();
}

// Applies an action set like the API server, then bumps the resourceVersion as it would.
inline Json apply(FakeHost& host, const Json& object, const v1::ActionSet& set,
                  const std::string& next_version) {
  Json out = Json::parse(host.apply(object.dump(), set));
  out["metadata"]["resourceVersion"] = next_version;
  return out;
}

}  // namespace workbench_test
