// Admission, suspension and scale to zero, applied as the API server applies merge patches.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;
using gpuaas::v1::ActionRequest;
using namespace kserve_test;

const char* kStop = "serving.kserve.io/stop";

ActionRequest flavor() {
  ActionRequest r;
  (*r.mutable_node_labels())["pool"] = "a100";
  r.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
  r.set_flavor("a100-80g");
  r.set_reason("admitted by ClusterQueue gpu");
  return r;
}

Json body(const gpuaas::v1::ActionSet& set) {
  EXPECT_EQ(set.actions_size(), 1);
  return set.actions_size() == 1 ? Json::parse(set.actions(0).body_json()) : Json();
}

Json apply(FakeHost& host, const Json& object, const gpuaas::v1::ActionSet& set) {
  return Json::parse(host.apply(object.dump(), set));
}

// A suspended service with every component, as a queue would hold it.
Json suspended_service() {
  Json spec = {{"predictor",
                {{"minReplicas", 2},
                 {"nodeSelector", {{"zone", "a"}}},
                 {"model",
                  {{"modelFormat", {{"name", "huggingface"}}},
                   {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}},
               {"transformer", {{"containers", {{{"name", "t"}, {"image", "t:1"}}}}}}};
  return isvc(spec, {{kStop, "true"}});
}

TEST(kserve_plugin_actions, SamplesAdmitAndSuspend) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const char* file :
       {"autoscale.yaml", "autoscale_gpu.yaml", "hf_isvc.yaml", "kserve-isvc.yaml"}) {
    SCOPED_TRACE(file);
    Json original = sample(file);
    auto admit = host.action(GPUAAS_ACTION_ADMIT, original.dump(), flavor());
    Json b = body(admit);
    EXPECT_EQ(admit.actions(0).reason(), "admitted by ClusterQueue gpu");
    EXPECT_EQ(b["spec"]["predictor"]["nodeSelector"]["pool"], "a100");
    Json admitted = apply(host, original, admit);
    const Json& predictor = admitted["spec"]["predictor"];
    EXPECT_EQ(predictor["tolerations"].size(), 1u);
    EXPECT_EQ(predictor["tolerations"][0]["key"], "nvidia.com/gpu");
    EXPECT_EQ(admitted["metadata"]["annotations"]["gpuaas.io/flavor"], "a100-80g");
    EXPECT_FALSE(admitted["metadata"]["annotations"].contains(kStop));
    // Admitting again to the same flavor changes nothing.
    EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, admitted.dump(), flavor()).actions_size(), 0);

    auto suspend = host.action(GPUAAS_ACTION_SUSPEND, admitted.dump());
    Json back = apply(host, admitted, suspend);
    EXPECT_EQ(back["metadata"]["annotations"][kStop], "true");
    // Templates are as published; the only trace left is the stop annotation.
    Json expected = original;
    expected["metadata"]["annotations"][kStop] = "true";
    EXPECT_EQ(back, expected);
    EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, back.dump()).actions_size(), 0);
  }
}

// kserve-isvc.yaml keeps its own nodeSelector beside the flavor's, and gets it back alone.
TEST(kserve_plugin_actions, SampleNodeSelectorIsMergedAndRestored) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json original = sample("kserve-isvc.yaml");
  Json admitted =
      apply(host, original, host.action(GPUAAS_ACTION_ADMIT, original.dump(), flavor()));
  Json sel = admitted["spec"]["predictor"]["nodeSelector"];
  EXPECT_EQ(sel, Json({{"node.kubernetes.io/instance-type", "g5.8xlarge"}, {"pool", "a100"}}));
  Json back = apply(host, admitted, host.action(GPUAAS_ACTION_SUSPEND, admitted.dump()));
  EXPECT_EQ(back["spec"]["predictor"]["nodeSelector"],
            Json({{"node.kubernetes.io/instance-type", "g5.8xlarge"}}));
}

TEST(kserve_plugin_actions, AdmitThenSuspendRestoresTheObject) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json original = suspended_service();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, original.dump(), flavor());
  Json b = body(admit);
  EXPECT_EQ(b["metadata"]["resourceVersion"], "7");
  EXPECT_TRUE(b["metadata"]["annotations"][kStop].is_null());  // removed
  EXPECT_EQ(b["spec"]["predictor"]["nodeSelector"], Json({{"pool", "a100"}}));
  EXPECT_EQ(b["spec"]["transformer"]["nodeSelector"], Json({{"pool", "a100"}}));

  Json admitted = apply(host, original, admit);
  EXPECT_EQ(admitted["spec"]["predictor"]["nodeSelector"], Json({{"zone", "a"}, {"pool", "a100"}}));
  admitted["metadata"]["resourceVersion"] = "8";
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, admitted.dump());
  EXPECT_EQ(body(suspend)["metadata"]["resourceVersion"], "8");
  Json back = apply(host, admitted, suspend);
  back["metadata"]["resourceVersion"] = "7";
  EXPECT_EQ(back, original);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, original.dump()).actions_size(), 0);
}

// A stale admission must not apply to a newer version of the object.
TEST(kserve_plugin_actions, AdmitIsGuardedByResourceVersion) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json original = suspended_service();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, original.dump(), flavor());
  Json newer = original;
  newer["metadata"]["resourceVersion"] = "9";
  EXPECT_ANY_THROW(host.apply(newer.dump(), admit));
}

// Knative mode (the default here): minReplicas 0 on every component, recorded, then restored.
TEST(kserve_plugin_actions, KnativeScalesThroughMinReplicas) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json running = suspended_service();
  running["metadata"].erase("annotations");
  auto down = host.action(GPUAAS_ACTION_SCALE_TO_ZERO, running.dump());
  Json b = body(down);
  EXPECT_EQ(b["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(b["spec"]["predictor"]["minReplicas"], 0);
  EXPECT_EQ(b["spec"]["transformer"]["minReplicas"], 0);
  EXPECT_FALSE(b["metadata"]["annotations"].contains(kStop));
  Json scaled = apply(host, running, down);
  EXPECT_EQ(
      Json::parse(scaled["metadata"]["annotations"]["gpuaas.io/scaled-from"].get<std::string>()),
      Json({{"/spec/predictor/minReplicas", 2}, {"/spec/transformer/minReplicas", nullptr}}));
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, scaled.dump()).actions_size(), 0);

  auto up = host.action(GPUAAS_ACTION_SCALE_BACK, scaled.dump());
  Json restored = apply(host, scaled, up);
  EXPECT_EQ(restored, running);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, restored.dump()).actions_size(), 0);
}

TEST(kserve_plugin_actions, SamplesScaleToZero) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // kserve-isvc.yaml already has minReplicas 0: Knative scales it to zero by itself.
  EXPECT_EQ(
      host.action(GPUAAS_ACTION_SCALE_TO_ZERO, sample("kserve-isvc.yaml").dump()).actions_size(),
      0);
  for (const char* file : {"autoscale.yaml", "autoscale_gpu.yaml", "hf_isvc.yaml"}) {
    SCOPED_TRACE(file);
    Json original = sample(file);
    auto down = host.action(GPUAAS_ACTION_SCALE_TO_ZERO, original.dump());
    Json scaled = apply(host, original, down);
    EXPECT_EQ(scaled["spec"]["predictor"]["minReplicas"], 0);
    Json back = apply(host, scaled, host.action(GPUAAS_ACTION_SCALE_BACK, scaled.dump()));
    EXPECT_EQ(back, original);
  }
}

// Standard (RawDeployment) mode: HPA/KEDA keep a pod, so scale to zero stops the service.
TEST(kserve_plugin_actions, StandardScalesThroughStop) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json raw = sample("hf_isvc.yaml");
  raw["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] = "RawDeployment";
  auto down = host.action(GPUAAS_ACTION_SCALE_TO_ZERO, raw.dump());
  Json b = body(down);
  EXPECT_EQ(b["metadata"]["annotations"][kStop], "true");
  EXPECT_FALSE(b.contains("spec"));  // no replica count touched
  Json scaled = apply(host, raw, down);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, scaled.dump()).actions_size(), 0);
  Json back = apply(host, scaled, host.action(GPUAAS_ACTION_SCALE_BACK, scaled.dump()));
  EXPECT_EQ(back, raw);

  // A stop annotation the user had set to "false" comes back as "false".
  Json user_false = raw;
  user_false["metadata"]["annotations"][kStop] = "false";
  scaled = apply(host, user_false, host.action(GPUAAS_ACTION_SCALE_TO_ZERO, user_false.dump()));
  EXPECT_EQ(scaled["metadata"]["annotations"][kStop], "true");
  back = apply(host, scaled, host.action(GPUAAS_ACTION_SCALE_BACK, scaled.dump()));
  EXPECT_EQ(back, user_false);

  // A service the user stopped is left alone both ways.
  Json user_stopped = raw;
  user_stopped["metadata"]["annotations"][kStop] = "true";
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, user_stopped.dump()).actions_size(), 0);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, user_stopped.dump()).actions_size(), 0);
}

TEST(kserve_plugin_actions, ModeComesFromStatusThenAnnotationThenConfig) {
  // The config default decides for an object that names no mode.
  FakeHost standard(gpuaas_plugin_get_descriptor, R"({"default_deployment_mode": "Standard"})");
  Json plain = sample("autoscale.yaml");
  EXPECT_EQ(body(standard.action(GPUAAS_ACTION_SCALE_TO_ZERO,
                                 plain.dump()))["metadata"]["annotations"][kStop],
            "true");
  // The annotation overrides the default...
  Json knative = plain;
  knative["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] = "Knative";
  EXPECT_EQ(body(standard.action(GPUAAS_ACTION_SCALE_TO_ZERO,
                                 knative.dump()))["spec"]["predictor"]["minReplicas"],
            0);
  // ...and the mode KServe recorded in the status overrides both.
  knative["status"]["deploymentMode"] = "RawDeployment";
  EXPECT_EQ(body(standard.action(GPUAAS_ACTION_SCALE_TO_ZERO,
                                 knative.dump()))["metadata"]["annotations"][kStop],
            "true");
}

TEST(kserve_plugin_actions, ModelMeshHasNothingToActOn) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json mm = sample("hf_isvc.yaml");
  mm["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] = "ModelMesh";
  for (auto kind : {GPUAAS_ACTION_ADMIT, GPUAAS_ACTION_SUSPEND, GPUAAS_ACTION_SCALE_TO_ZERO,
                    GPUAAS_ACTION_SCALE_BACK}) {
    try {
      host.action(kind, mm.dump(), flavor());
      ADD_FAILURE() << "action " << kind << " accepted";
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_NOT_SUPPORTED);
    }
  }
}

TEST(kserve_plugin_actions, MalformedObjectsAreRefused) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  try {
    host.action(GPUAAS_ACTION_ADMIT, R"({"apiVersion": )", flavor());
    ADD_FAILURE();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
  }
  try {
    host.action(GPUAAS_ACTION_ADMIT, isvc(Json::object()).dump(), flavor());
    ADD_FAILURE();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/spec/predictor: missing");
  }
  try {
    Json o = suspended_service();
    o["metadata"].erase("annotations");  // running, so there is something to scale
    o["spec"]["predictor"]["minReplicas"] = 2147483648LL;
    host.action(GPUAAS_ACTION_SCALE_TO_ZERO, o.dump());
    ADD_FAILURE();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
  }
}

ActionRequest bounds(int min, int max, double target) {
  ActionRequest r;
  r.mutable_scale()->set_min_replicas(min);
  r.mutable_scale()->set_max_replicas(max);
  r.mutable_scale()->set_metric("rps");
  r.mutable_scale()->set_target(target);
  return r;
}

// The autoscaler's bounds on the published samples (Knative mode): the predictor's minReplicas,
// maxReplicas, scaleMetric and scaleTarget, the fields KServe reads (scaleTarget an integer,
// rounded down), guarded by the resourceVersion; nothing else changes.
TEST(kserve_plugin_actions, SetScaleWritesKServesAutoscalingFields) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  ASSERT_TRUE(host.has(GPUAAS_CAP_AUTOSCALE));
  for (const char* file : {"autoscale.yaml", "autoscale_gpu.yaml", "hf_isvc.yaml"}) {
    SCOPED_TRACE(file);
    Json original = sample(file);
    original["metadata"]["resourceVersion"] = "7";
    auto set = host.action(GPUAAS_ACTION_SET_SCALE, original.dump(), bounds(5, 8, 10.2));
    ASSERT_EQ(set.actions_size(), 1);
    Json b = body(set);
    EXPECT_EQ(b["metadata"]["resourceVersion"], "7");
    Json scaled = apply(host, original, set);
    const Json& p = scaled["spec"]["predictor"];
    EXPECT_EQ(p["minReplicas"], 5);
    EXPECT_EQ(p["maxReplicas"], 8);
    EXPECT_EQ(p["scaleMetric"], "rps");
    EXPECT_EQ(p["scaleTarget"], 10);
    // The target is the target: Knative's default 70% utilisation is not taken off it again.
    EXPECT_EQ(
        scaled["metadata"]["annotations"]["autoscaling.knative.dev/target-utilization-percentage"],
        "100");
    // Only those four fields of the predictor and that annotation changed.
    Json rest = scaled;
    rest["metadata"]["annotations"].erase("autoscaling.knative.dev/target-utilization-percentage");
    if (rest["metadata"]["annotations"].empty() && !original["metadata"].contains("annotations"))
      rest["metadata"].erase("annotations");
    for (const char* f : {"minReplicas", "maxReplicas", "scaleMetric", "scaleTarget"}) {
      rest["spec"]["predictor"].erase(f);
      if (original["spec"]["predictor"].contains(f))
        rest["spec"]["predictor"][f] = original["spec"]["predictor"][f];
    }
    EXPECT_EQ(rest, original);
    // The same bounds again: nothing to patch.
    EXPECT_EQ(
        host.action(GPUAAS_ACTION_SET_SCALE, scaled.dump(), bounds(5, 8, 10.2)).actions_size(), 0);
  }
}

// Standard mode: HPA scales on CPU or memory, not on requests, so only the replica bounds are
// written; a service gpuaas has at zero keeps its minReplicas to the idle rules (scale_back).
TEST(kserve_plugin_actions, SetScaleInStandardModeAndAtZero) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json raw = sample("hf_isvc.yaml");
  raw["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] = "RawDeployment";
  Json scaled = apply(host, raw, host.action(GPUAAS_ACTION_SET_SCALE, raw.dump(), bounds(2, 6, 4)));
  EXPECT_EQ(scaled["spec"]["predictor"]["minReplicas"], 2);
  EXPECT_EQ(scaled["spec"]["predictor"]["maxReplicas"], 6);
  EXPECT_FALSE(scaled["spec"]["predictor"].contains("scaleMetric"));
  EXPECT_FALSE(scaled["spec"]["predictor"].contains("scaleTarget"));

  Json knative = sample("hf_isvc.yaml");
  Json zero = apply(host, knative, host.action(GPUAAS_ACTION_SCALE_TO_ZERO, knative.dump()));
  ASSERT_EQ(zero["spec"]["predictor"]["minReplicas"], 0);
  Json bounded =
      apply(host, zero, host.action(GPUAAS_ACTION_SET_SCALE, zero.dump(), bounds(3, 6, 4)));
  EXPECT_EQ(bounded["spec"]["predictor"]["minReplicas"], 0);
  EXPECT_EQ(bounded["spec"]["predictor"]["maxReplicas"], 6);
  Json woken = apply(host, bounded, host.action(GPUAAS_ACTION_SCALE_BACK, bounded.dump()));
  EXPECT_NE(woken["spec"]["predictor"].value("minReplicas", 1), 0);
}

TEST(kserve_plugin_actions, SetScaleRefusesBadBounds) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const std::string o = sample("hf_isvc.yaml").dump();
  for (const ActionRequest& r : {ActionRequest{}, bounds(4, 2, 1), bounds(-1, 2, 1)}) {
    try {
      host.action(GPUAAS_ACTION_SET_SCALE, o, r);
      ADD_FAILURE() << "accepted " << r.ShortDebugString();
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    }
  }
}

}  // namespace
