// ADMIT and SUSPEND: the gate goes and other gates stay, the flavor's selector and tolerations,
// a Pod already released, deletion as the only way to stop a running Pod, stale and malformed
// objects.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace pod_test;
namespace plugin = gpuaas::plugin;

Json admitted(FakeHost& host, const Json& o, const v1::ActionRequest& r) {
  return Json::parse(host.apply(o.dump(), host.action(GPUAAS_ACTION_ADMIT, o.dump(), r)));
}

TEST(PodActions, AdmitRemovesOnlyTheAdmissionGate) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto admit = host.action(GPUAAS_ACTION_ADMIT, gated_pod().dump(), flavor_request());
  ASSERT_EQ(admit.actions_size(), 1);
  const auto& a = admit.actions(0);
  EXPECT_EQ(a.operation(), v1::Action::MERGE_PATCH);
  EXPECT_EQ(a.target().kind(), "Pod");
  EXPECT_EQ(a.target().name(), "train");
  EXPECT_EQ(a.reason(), "admitted by ClusterQueue team-a");
  Json body = Json::parse(a.body_json());
  EXPECT_EQ(body["metadata"]["resourceVersion"], "5");
  // The list travels whole: the other controller's gate is in it.
  EXPECT_EQ(body["spec"]["schedulingGates"],
            Json::parse(R"([{"name":"example.com/quota-check"}])"));
  Json o = Json::parse(host.apply(gated_pod().dump(), admit));
  EXPECT_EQ(o["spec"]["schedulingGates"], Json::parse(R"([{"name":"example.com/quota-check"}])"));
}

TEST(PodActions, TheLastGateGoesAsNull) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json pod = gated_pod();
  pod["spec"]["schedulingGates"] = Json::parse(R"([{"name":"kueue.x-k8s.io/admission"}])");
  auto admit = host.action(GPUAAS_ACTION_ADMIT, pod.dump(), v1::ActionRequest());
  ASSERT_EQ(admit.actions_size(), 1);
  Json body = Json::parse(admit.actions(0).body_json());
  EXPECT_TRUE(body["spec"].contains("schedulingGates"));
  EXPECT_TRUE(body["spec"]["schedulingGates"].is_null());
  Json o = Json::parse(host.apply(pod.dump(), admit));
  EXPECT_FALSE(o["spec"].contains("schedulingGates"));
  EXPECT_EQ(o["spec"]["nodeSelector"], pod["spec"]["nodeSelector"]);  // no flavor labels
}

TEST(PodActions, AdmitMergesTheFlavorsSelectorAndTolerations) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = admitted(host, gated_pod(), flavor_request());
  EXPECT_EQ(o["spec"]["nodeSelector"], (Json{{"zone", "a"}, {"gpu.pool", "a100"}}));
  ASSERT_EQ(o["spec"]["tolerations"].size(), 2u);
  EXPECT_EQ(o["spec"]["tolerations"][0]["key"], "batch");
  EXPECT_EQ(o["spec"]["tolerations"][1]["key"], "nvidia.com/gpu");
  EXPECT_EQ(o["metadata"]["annotations"][plugin::kFlavorAnnotation], "a100");
  EXPECT_TRUE(o["metadata"]["annotations"].contains(plugin::kOriginalTemplatesAnnotation));
  EXPECT_EQ(o["spec"]["containers"], gated_pod()["spec"]["containers"]);
}

TEST(PodActions, AFlavorThatChangesTheSelectorOfAGatedPodIsRefused) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json pod = gated_pod();
  pod["spec"]["nodeSelector"]["gpu.pool"] = "h100";
  EXPECT_EQ(invalid_input([&] { host.action(GPUAAS_ACTION_ADMIT, pod.dump(), flavor_request()); }),
            "/spec/nodeSelector/gpu.pool: the Pod asks for \"h100\", flavor \"a100\" for "
            "\"a100\"; Kubernetes only adds to a gated Pod's nodeSelector");
  // The same value is no change.
  pod["spec"]["nodeSelector"]["gpu.pool"] = "a100";
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, pod.dump(), flavor_request()).actions_size(), 1);
}

TEST(PodActions, AdmitOfAnUngatedPodIsEmptyUnlessTheSelectorWouldChange) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Admitted, then the outcome came back late and admission asks again.
  Json o = admitted(host, gated_pod(), flavor_request());
  o["spec"]["nodeName"] = "gpu-node-1";
  o["status"]["phase"] = "Running";
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, o.dump(), flavor_request()).actions_size(), 0);
  // Running without ever being gated, with a flavor that asks for nothing.
  EXPECT_EQ(
      host.action(GPUAAS_ACTION_ADMIT, running_pod().dump(), v1::ActionRequest()).actions_size(),
      0);
  // The API server refuses a nodeSelector change once the gate is gone.
  EXPECT_EQ(
      invalid_input([&] { host.action(GPUAAS_ACTION_ADMIT, o.dump(), flavor_request("h100")); }),
      "/spec/schedulingGates: the Pod is not gated by kueue.x-k8s.io/admission, so "
      "Kubernetes keeps spec.nodeSelector as it is (flavor \"a100\"); flavor \"h100\" "
      "would change it");
  EXPECT_EQ(
      rc_of([&] { host.action(GPUAAS_ACTION_ADMIT, running_pod().dump(), flavor_request()); }),
      GPUAAS_RC_INVALID_INPUT);
}

TEST(PodActions, SuspendOfARunningPodDeletesIt) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  v1::ActionRequest r;
  r.set_reason("preempted by team-b/eval");
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, running_pod().dump(), r);
  ASSERT_EQ(suspend.actions_size(), 1);
  const auto& a = suspend.actions(0);
  EXPECT_EQ(a.operation(), v1::Action::DELETE);
  EXPECT_EQ(a.body_json(), "");
  EXPECT_EQ(a.target().api_version(), "v1");
  EXPECT_EQ(a.target().kind(), "Pod");
  EXPECT_EQ(a.target().namespace_(), "team-a");
  EXPECT_EQ(a.target().name(), "train");
  EXPECT_EQ(a.target().uid(), "u-1");
  EXPECT_EQ(a.reason(), "preempted by team-b/eval");
  // Released but not scheduled yet: it would start, so it goes too.
  Json released = running_pod();
  released["status"]["phase"] = "Pending";
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, released.dump()).actions(0).operation(),
            v1::Action::DELETE);
}

TEST(PodActions, SuspendOfAGatedFinishedOrDeletedPodIsEmpty) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, gated_pod().dump()).actions_size(), 0);
  for (const char* phase : {"Succeeded", "Failed"}) {
    Json done = running_pod();
    done["status"]["phase"] = phase;
    EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, done.dump()).actions_size(), 0) << phase;
  }
  Json going = running_pod();
  going["metadata"]["deletionTimestamp"] = "2026-03-01T10:00:00Z";
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, going.dump()).actions_size(), 0);
}

TEST(PodActions, StalePatchIsRefusedByTheApiServer) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = gated_pod();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, o.dump(), flavor_request());
  o["metadata"]["resourceVersion"] = "6";  // another controller changed the gates meanwhile
  EXPECT_ANY_THROW(host.apply(o.dump(), admit));
}

TEST(PodActions, MalformedObjectsAreInvalidInputNamingThePointer) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto error_of = [&](gpuaas_action_kind kind, const Json& o,
                      const v1::ActionRequest& r = flavor_request()) {
    return invalid_input([&] { host.action(kind, o.dump(), r); });
  };
  Json o = gated_pod();
  o["spec"]["schedulingGates"] = Json::parse(R"([{"name":"kueue.x-k8s.io/admission"},"x"])");
  EXPECT_EQ(error_of(GPUAAS_ACTION_ADMIT, o),
            "/spec/schedulingGates/1: want {\"name\": string}, got \"x\"");
  EXPECT_EQ(error_of(GPUAAS_ACTION_SUSPEND, o),
            "/spec/schedulingGates/1: want {\"name\": string}, got \"x\"");
  o = gated_pod();
  o["spec"]["nodeSelector"] = "zone=a";
  EXPECT_NE(error_of(GPUAAS_ACTION_ADMIT, o).find("nodeSelector: not an object"),
            std::string::npos);
  o = gated_pod();
  o["spec"]["tolerations"] = "batch";
  EXPECT_NE(error_of(GPUAAS_ACTION_ADMIT, o).find("tolerations: not a list"), std::string::npos);
  o = gated_pod();
  o["spec"] = "none";
  EXPECT_NE(error_of(GPUAAS_ACTION_ADMIT, o), "");
  v1::ActionRequest bad;
  bad.add_tolerations_json("{nope");
  EXPECT_NE(error_of(GPUAAS_ACTION_ADMIT, gated_pod(), bad).find("toleration"), std::string::npos);
  EXPECT_EQ(rc_of([&] { host.action(GPUAAS_ACTION_SCALE_TO_ZERO, gated_pod().dump()); }),
            GPUAAS_RC_NOT_SUPPORTED);
}

}  // namespace
