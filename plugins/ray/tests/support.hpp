// Shared by the ray plugin's tests: the entry point, the published samples, small builders.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "gpuaas/plugin/sdk.hpp"
#include "gpuaas/plugin/testing.hpp"

extern "C" const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

namespace ray_test {

using gpuaas::plugin::Json;
using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;
namespace v1 = gpuaas::v1;

// Every published RayCluster and RayJob sample, relative to shared/manifests.
struct Sample {
  const char* file;
  const char* kind;
};
inline constexpr Sample kClusters[] = {{"kueue/ray-cluster-sample.yaml", "RayCluster"},
                                       {"kuberay/ray-cluster.complete.yaml", "RayCluster"},
                                       {"kuberay/ray-cluster.autoscaler.yaml", "RayCluster"}};
inline constexpr Sample kJobs[] = {{"kueue/ray-job-sample.yaml", "RayJob"},
                                   {"kuberay/ray-job.sample.yaml", "RayJob"},
                                   {"kuberay/ray-job.batch-inference.yaml", "RayJob"},
                                   {"kuberay/ray-job.kueue-toy-sample.yaml", "RayJob"},
                                   {"kuberay/ray-job.pytorch-image-classifier.yaml", "RayJob"}};

// The object of that kind in a sample file, as the API server would hold it: two samples use
// generateName, and every stored object has a namespace and a resourceVersion.
inline Json load(const std::string& file, const char* kind) {
  std::string path = GPUAAS_SHARED_DIR;
  path.append("/manifests/").append(file);
  Json o = Json::parse(gpuaas::plugin::testing::load_manifest(path, kind));
  Json& m = o["metadata"];
  if (!m.contains("name")) m["name"] = m.value("generateName", "x-") + "7k2qz";
  m["namespace"] = "team-a";
  m["resourceVersion"] = "1";
  return o;
}

inline const v1::PodSet& pod_set(const v1::WorkloadDemand& d, const std::string& name) {
  for (const auto& s : d.pod_sets()) {
    if (s.name() == name) return s;
  }
  ADD_FAILURE() << "no pod set " << name;
  static const v1::PodSet none;
  return none;
}

inline int64_t milli(const v1::PodSet& s, const std::string& resource) {
  return gpuaas::plugin::per_pod_milli(s, resource);
}

// The InvalidInput message of a demand call; "" when it did not fail so.
inline std::string demand_error(FakeHost& host, const std::string& object) {
  try {
    host.demand(object);
  } catch (const CallFailed& e) {
    if (e.rc() == GPUAAS_RC_INVALID_INPUT) return e.what();
    return std::string("rc ") + std::to_string(e.rc()) + ": " + e.what();
  }
  return "";
}

// A small RayCluster: head with 1 CPU, one worker group "gpu" of 2 replicas with one GPU each.
inline Json small_cluster() {
  return Json::parse(R"({"apiVersion":"ray.io/v1","kind":"RayCluster",
    "metadata":{"name":"rc","namespace":"team-a","resourceVersion":"5"},
    "spec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[
        {"name":"ray-head","resources":{"requests":{"cpu":"1"}}}]}}},
      "workerGroupSpecs":[{"groupName":"gpu","replicas":2,"minReplicas":1,"maxReplicas":4,
        "rayStartParams":{},"template":{"spec":{"containers":[
          {"name":"ray-worker","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}]}})");
}

// A small RayJob around the same cluster spec.
inline Json small_job() {
  Json c = small_cluster();
  Json j = {{"apiVersion", "ray.io/v1"},
            {"kind", "RayJob"},
            {"metadata", {{"name", "rj"}, {"namespace", "team-a"}, {"resourceVersion", "9"}}},
            {"spec", {{"entrypoint", "python job.py"}, {"rayClusterSpec", c["spec"]}}}};
  return j;
}

}  // namespace ray_test
