// Shared by the pod tests: the plugin's entry point and small builders.
#pragma once

#include <string>

#include "gpuaas/plugin/sdk.hpp"
#include "gpuaas/plugin/testing.hpp"

extern "C" const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

namespace pod_test {

using gpuaas::plugin::Json;
using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;
namespace v1 = gpuaas::v1;

// A queued Pod as the bridge's webhook leaves it: one GPU container, its own node selector and
// toleration, and the admission gate after a gate of another controller.
inline Json gated_pod() {
  return Json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"train","namespace":"team-a","uid":"u-1","resourceVersion":"5",
      "labels":{"kueue.x-k8s.io/queue-name":"team-a-queue"}},
    "spec":{"restartPolicy":"Never",
      "nodeSelector":{"zone":"a"},
      "tolerations":[{"key":"batch","operator":"Exists"}],
      "schedulingGates":[{"name":"example.com/quota-check"},{"name":"kueue.x-k8s.io/admission"}],
      "containers":[{"name":"train","image":"trainer",
        "resources":{"limits":{"nvidia.com/gpu":1},"requests":{"cpu":"2","memory":"1Gi"}}}]},
    "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",
      "reason":"SchedulingGated"}]}})");
}

// The same Pod after admission and scheduling: no gates, bound and running.
inline Json running_pod() {
  Json o = gated_pod();
  o["spec"].erase("schedulingGates");
  o["spec"]["nodeName"] = "gpu-node-1";
  o["status"] = Json::parse(R"({"phase":"Running","conditions":[{"type":"PodScheduled",
    "status":"True"}]})");
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

// The message of a call that failed with InvalidInput; "" when it did not fail, "rc N" when it
// failed otherwise.
template <typename Call>
std::string invalid_input(Call&& call) {
  try {
    call();
  } catch (const CallFailed& e) {
    return e.rc() == GPUAAS_RC_INVALID_INPUT ? e.what() : "rc " + std::to_string(e.rc());
  }
  return "";
}

}  // namespace pod_test
