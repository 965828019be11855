// ADMIT and SUSPEND beyond the samples: re-admission to another flavor, templates that had a
// selector of their own, TrainJob overrides next to the user's, malformed flags.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace gpuaas;
using kft_test::Json;
using plugin::testing::CallFailed;
using plugin::testing::FakeHost;

Json tfjob() {
  return Json::parse(R"({"apiVersion":"kubeflow.org/v1","kind":"TFJob",
    "metadata":{"name":"tf","namespace":"ns","resourceVersion":"5"},
    "spec":{"runPolicy":{"suspend":true},"tfReplicaSpecs":{
      "PS":{"replicas":1,"template":{"spec":{"nodeSelector":{"zone":"a"},
        "tolerations":[{"key":"ps","operator":"Exists"}],"containers":[{"name":"tf"}]}}},
      "Worker":{"replicas":2,"template":{"spec":{"containers":[{"name":"tf",
        "resources":{"limits":{"nvidia.com/gpu":1}}}]}}}}}})");
}

Json trainjob() {
  return Json::parse(R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",
    "metadata":{"name":"tj","namespace":"ns","resourceVersion":"9"},
    "spec":{"runtimeRef":{"name":"torch-distributed"},"suspend":true,
      "trainer":{"numNodes":2},
      "podSpecOverrides":[{"targetJobs":[{"name":"node"}],"serviceAccountName":"trainer"}]}})");
}

Json admitted(FakeHost& host, const Json& o, const v1::ActionRequest& r) {
  return Json::parse(host.apply(o.dump(), host.action(GPUAAS_ACTION_ADMIT, o.dump(), r)));
}

TEST(KubeflowTrainingActions, AdmitKeepsTheTemplatesOwnSelectorAndTolerations) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json a = admitted(host, tfjob(), kft_test::flavor_request());
  const Json& ps = a["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"];
  EXPECT_EQ(ps["nodeSelector"], (Json{{"zone", "a"}, {"gpu.pool", "a100"}}));
  ASSERT_EQ(ps["tolerations"].size(), 2u);
  EXPECT_EQ(ps["tolerations"][0]["key"], "ps");
  EXPECT_EQ(a["spec"]["runPolicy"]["suspend"], false);
}

TEST(KubeflowTrainingActions, ReadmissionToAnotherFlavorReplacesTheFirst) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json a = admitted(host, tfjob(), kft_test::flavor_request());
  v1::ActionRequest h100;
  (*h100.mutable_node_labels())["gpu.pool"] = "h100";
  h100.set_flavor("h100");
  Json b = admitted(host, a, h100);
  const Json& ps = b["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"];
  EXPECT_EQ(ps["nodeSelector"], (Json{{"zone", "a"}, {"gpu.pool", "h100"}}));
  EXPECT_EQ(ps["tolerations"].size(), 1u);  // the a100 toleration went with its flavor
  EXPECT_EQ(b["metadata"]["annotations"][plugin::kFlavorAnnotation], "h100");
  // Suspending still restores what the user wrote.
  Json back = Json::parse(host.apply(b.dump(), host.action(GPUAAS_ACTION_SUSPEND, b.dump())));
  EXPECT_EQ(back, tfjob());
}

TEST(KubeflowTrainingActions, AdmitOfAJobWithoutRunPolicyCreatesIt) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = kft_test::load("kubeflow-training/simple.yaml", "PyTorchJob");
  auto admit = host.action(GPUAAS_ACTION_ADMIT, o.dump(), kft_test::flavor_request());
  Json body = Json::parse(admit.actions(0).body_json());
  EXPECT_EQ(body["spec"]["runPolicy"]["suspend"], false);
  EXPECT_FALSE(body["metadata"].contains("resourceVersion"));  // the object has none
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, o.dump());
  EXPECT_EQ(Json::parse(suspend.actions(0).body_json())["spec"]["runPolicy"]["suspend"], true);
}

TEST(KubeflowTrainingActions, StalePatchIsRefusedByTheApiServer) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = tfjob();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, o.dump(), kft_test::flavor_request());
  o["metadata"]["resourceVersion"] = "6";  // someone else wrote in between
  EXPECT_ANY_THROW(host.apply(o.dump(), admit));
}

TEST(KubeflowTrainingActions, MalformedObjectsAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto rc_of = [&](gpuaas_action_kind kind, const Json& o) {
    try {
      host.action(kind, o.dump(), kft_test::flavor_request());
    } catch (const CallFailed& e) {
      return e.rc();
    }
    return GPUAAS_RC_OK;
  };
  Json o = tfjob();
  o["spec"]["runPolicy"]["suspend"] = "yes";
  EXPECT_EQ(rc_of(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(rc_of(GPUAAS_ACTION_SUSPEND, o), GPUAAS_RC_INVALID_INPUT);
  o = tfjob();
  o["spec"]["runPolicy"] = "Never";
  EXPECT_EQ(rc_of(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  o = tfjob();
  o["spec"]["tfReplicaSpecs"]["Worker"].erase("template");
  EXPECT_EQ(rc_of(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  o = trainjob();
  o["spec"]["podSpecOverrides"] = "none";
  EXPECT_EQ(rc_of(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  v1::ActionRequest bad;
  bad.add_tolerations_json("{nope");
  try {
    host.action(GPUAAS_ACTION_ADMIT, trainjob().dump(), bad);
    ADD_FAILURE();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
  }
}

TEST(KubeflowTrainingActions, TrainJobOverrideGoesAfterTheUsersAndLeavesWithSuspend) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const Json o = trainjob();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, o.dump(), kft_test::flavor_request());
  EXPECT_EQ(Json::parse(admit.actions(0).body_json())["metadata"]["resourceVersion"], "9");
  Json a = Json::parse(host.apply(o.dump(), admit));
  const Json& list = a["spec"]["podSpecOverrides"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], o["spec"]["podSpecOverrides"][0]);  // the user's, first
  EXPECT_EQ(list[1]["nodeSelector"]["gpu.pool"], "a100");
  EXPECT_EQ(a["spec"]["suspend"], false);
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, a.dump(), kft_test::flavor_request()).actions_size(),
            0);
  Json back = Json::parse(host.apply(a.dump(), host.action(GPUAAS_ACTION_SUSPEND, a.dump())));
  EXPECT_EQ(back, o);
}

TEST(KubeflowTrainingActions, TrainJobPodTemplateOverridesWhenConfiguredOrPresent) {
  FakeHost host(gpuaas_plugin_get_descriptor, R"({"trainjob_overrides": "podTemplateOverrides"})");
  Json o = trainjob();
  o["spec"].erase("podSpecOverrides");
  Json a = admitted(host, o, kft_test::flavor_request());
  ASSERT_EQ(a["spec"]["podTemplateOverrides"].size(), 1u);
  EXPECT_EQ(a["spec"]["podTemplateOverrides"][0]["spec"]["nodeSelector"]["gpu.pool"], "a100");
  EXPECT_FALSE(a["spec"].contains("podSpecOverrides"));
  Json back = Json::parse(host.apply(a.dump(), host.action(GPUAAS_ACTION_SUSPEND, a.dump())));
  EXPECT_EQ(back, o);
  // With the default configuration, an object that already uses the newer field keeps to it.
  FakeHost plain(gpuaas_plugin_get_descriptor);
  o["spec"]["podTemplateOverrides"] = Json::array();
  a = admitted(plain, o, kft_test::flavor_request());
  EXPECT_EQ(a["spec"]["podTemplateOverrides"].size(), 1u);
  EXPECT_FALSE(a["spec"].contains("podSpecOverrides"));
}

TEST(KubeflowTrainingActions, FlavorWithoutLabelsOnlyUnsuspends) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const Json o = trainjob();
  Json a = admitted(host, o, v1::ActionRequest());
  EXPECT_EQ(a["spec"]["podSpecOverrides"], o["spec"]["podSpecOverrides"]);
  EXPECT_EQ(a["spec"]["suspend"], false);
  Json back = Json::parse(host.apply(a.dump(), host.action(GPUAAS_ACTION_SUSPEND, a.dump())));
  EXPECT_EQ(back, o);
}

}  // namespace
