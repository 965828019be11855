// Shared by the batch-job tests: the plugin's entry point, the published sample and small
// builders.
#pragma once

#include <string>

#include "gpuaas/plugin/sdk.hpp"
#include "gpuaas/plugin/testing.hpp"

extern "C" const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

namespace batch_job_test {

using gpuaas::plugin::Json;
using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;
namespace v1 = gpuaas::v1;

// Kueue's sample Job, read from shared/manifests, as the API server would hold it: the sample
// uses generateName, and every stored object has a resourceVersion.
inline Json sample_job() {
  // Appended piecewise: GCC 12 warns (-Warray-bounds, falsely) on the chained operator+.
  std::string path(GPUAAS_SHARED_DIR);
  path.append("/manifests/kueue/sample-job.yaml");
  Json o = Json::parse(gpuaas::plugin::testing::load_manifest(path, "Job"));
  Json& m = o["metadata"];
  if (!m.contains("name")) m["name"] = m.value("generateName", "x-") + "7k2qz";
  m["resourceVersion"] = "41";
  return o;
}

// The sample as a queue holds it on creation: suspended, never started.
inline Json queued_sample() {
  Json o = sample_job();
  o["spec"]["suspend"] = true;
  return o;
}

// A small Job: `parallelism` pods of one container with one GPU, suspended, in team-a.
inline Json gpu_job(const Json& parallelism = 2) {
  Json o = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job",
    "metadata":{"name":"train","namespace":"team-a","resourceVersion":"5",
      "labels":{"kueue.x-k8s.io/queue-name":"team-a-queue"}},
    "spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never",
      "nodeSelector":{"zone":"a"},
      "tolerations":[{"key":"batch","operator":"Exists"}],
      "containers":[{"name":"train","image":"trainer",
        "resources":{"limits":{"nvidia.com/gpu":1},"requests":{"cpu":"2"}}}]}}}})");
  if (!parallelism.is_null()) o["spec"]["parallelism"] = parallelism;
  return o;
}

// An ADMIT request for a flavor with one node label and one toleration.
inline v1::ActionRequest flavor_request(const std::string& pool = "a100") {
  v1::ActionRequest r;
  (*r.mutable_node_labels())["gpu.pool"] = pool;
  r.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
  r.set_flavor(pool);
  r.set_reason("admitted by ClusterQueue team-a");
  return r;
}

// The GPUAAS_RC_* of a failed call; GPUAAS_RC_OK when it did not fail.
template <typename Call>
gpuaas_rc rc_of(Call&& call) {
  try {
    call();
  } catch (const CallFailed& e) {
    return e.rc();
  }
  return GPUAAS_RC_OK;
}

}  // namespace batch_job_test
