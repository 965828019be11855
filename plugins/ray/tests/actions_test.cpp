// Admission, suspension and scale-to-zero as merge patches, applied as the API server would:
// round trips return the original object, patches carry the resourceVersion, and a second
// identical action is empty.
#include "support.hpp"

namespace {

using namespace ray_test;

const char* kToleration = R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})";

v1::ActionRequest flavor_a100() {
  v1::ActionRequest r;
  (*r.mutable_node_labels())["gpuaas.io/pool"] = "a100";
  r.add_tolerations_json(kToleration);
  r.set_flavor("a100");
  r.set_reason("admitted by ClusterQueue team-a");
  return r;
}

// The PodSpecs admission must reach: head and every worker group.
std::vector<std::string> pod_specs(const Json& o) {
  const std::string base = o["kind"] == "RayJob" ? "/spec/rayClusterSpec" : "/spec";
  std::vector<std::string> specs = {base + "/headGroupSpec/template/spec"};
  const Json& groups = o.at(Json::json_pointer(base)).value("workerGroupSpecs", Json::array());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    specs.push_back(base + "/workerGroupSpecs/" + std::to_string(i) + "/template/spec");
  }
  if (o["spec"].contains("submitterPodTemplate"))
    specs.push_back("/spec/submitterPodTemplate/spec");
  return specs;
}

// Admit a suspended object, check it, suspend it again: the original comes back.
void admit_suspend_round_trip(Json original) {
  SCOPED_TRACE(original["metadata"]["name"].get<std::string>());
  original["spec"]["suspend"] = true;
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto admit = host.action(GPUAAS_ACTION_ADMIT, original.dump(), flavor_a100());
  ASSERT_EQ(admit.actions_size(), 1);
  EXPECT_EQ(admit.actions(0).operation(), v1::Action::MERGE_PATCH);
  EXPECT_EQ(admit.actions(0).reason(), "admitted by ClusterQueue team-a");
  EXPECT_EQ(admit.actions(0).target().kind(), original["kind"].get<std::string>());
  Json body = Json::parse(admit.actions(0).body_json());
  const Json version = original["metadata"]["resourceVersion"];
  EXPECT_EQ(body["metadata"]["resourceVersion"], version);
  EXPECT_EQ(body["spec"]["suspend"], false);

  Json admitted = Json::parse(host.apply(original.dump(), admit));
  EXPECT_EQ(admitted["metadata"]["annotations"]["gpuaas.io/flavor"], "a100");
  for (const auto& ptr : pod_specs(original)) {
    const Json& spec = admitted.at(Json::json_pointer(ptr));
    EXPECT_EQ(spec["nodeSelector"]["gpuaas.io/pool"], "a100") << ptr;
    ASSERT_TRUE(spec.contains("tolerations")) << ptr;
    EXPECT_EQ(std::count(spec["tolerations"].begin(), spec["tolerations"].end(),
                         Json::parse(kToleration)),
              1)
        << ptr;
  }
  // Admitting again with the same flavor changes nothing.
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, admitted.dump(), flavor_a100()).actions_size(), 0);

  admitted["metadata"]["resourceVersion"] = "next";
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, admitted.dump());
  ASSERT_EQ(suspend.actions_size(), 1);
  EXPECT_EQ(Json::parse(suspend.actions(0).body_json())["metadata"]["resourceVersion"], "next");
  Json back = Json::parse(host.apply(admitted.dump(), suspend));
  back["metadata"]["resourceVersion"] = version;
  EXPECT_EQ(back, original);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, back.dump()).actions_size(), 0);
}

TEST(RayActions, AdmitSuspendRoundTripOfEverySample) {
  for (const auto& s : kClusters) admit_suspend_round_trip(load(s.file, s.kind));
  for (const auto& s : kJobs) admit_suspend_round_trip(load(s.file, s.kind));
}

TEST(RayActions, AdmitKeepsTheSampleTolerationsAndNodeSelectors) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // pytorch-image-classifier's gpu-group already tolerates nvidia.com/gpu: not added twice.
  Json j = load("kuberay/ray-job.pytorch-image-classifier.yaml", "RayJob");
  Json admitted =
      Json::parse(host.apply(j.dump(), host.action(GPUAAS_ACTION_ADMIT, j.dump(), flavor_a100())));
  const Json& worker =
      admitted["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"];
  EXPECT_EQ(worker["tolerations"].size(), 1u);
  // batch-inference's head has a nodeSelector of its own: merged, not replaced.
  j = load("kuberay/ray-job.batch-inference.yaml", "RayJob");
  admitted =
      Json::parse(host.apply(j.dump(), host.action(GPUAAS_ACTION_ADMIT, j.dump(), flavor_a100())));
  const Json& sel =
      admitted["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["nodeSelector"];
  EXPECT_EQ(sel["cloud.google.com/gke-accelerator"], "nvidia-tesla-t4");
  EXPECT_EQ(sel["gpuaas.io/pool"], "a100");
}

TEST(RayActions, AdmitLeavesAnAbsentSuspendFlagAbsent) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  Json body =
      Json::parse(host.action(GPUAAS_ACTION_ADMIT, c.dump(), flavor_a100()).actions(0).body_json());
  EXPECT_FALSE(body["spec"].contains("suspend"));
  // The whole workerGroupSpecs list travels, so the patch is guarded.
  EXPECT_TRUE(body["spec"]["workerGroupSpecs"].is_array());
  EXPECT_EQ(body["metadata"]["resourceVersion"], "5");
}

TEST(RayActions, AdmitPatchLosesToAConcurrentEdit) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, c.dump(), flavor_a100());
  c["metadata"]["resourceVersion"] = "6";  // someone edited a worker group meanwhile
  EXPECT_THROW(host.apply(c.dump(), admit), CallFailed);
}

TEST(RayActions, AdmitReachesTheSubmitterTemplate) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json j = small_job();
  j["spec"]["submitterPodTemplate"] = Json::parse(
      R"({"spec":{"containers":[{"name":"s","image":"ray"}],"restartPolicy":"Never"}})");
  admit_suspend_round_trip(j);
  // On an existing cluster only the submitter is admitted.
  j["spec"].erase("rayClusterSpec");
  j["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  Json admitted =
      Json::parse(host.apply(j.dump(), host.action(GPUAAS_ACTION_ADMIT, j.dump(), flavor_a100())));
  EXPECT_EQ(admitted["spec"]["submitterPodTemplate"]["spec"]["nodeSelector"]["gpuaas.io/pool"],
            "a100");
}

TEST(RayActions, MalformedActionsAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  c["spec"]["workerGroupSpecs"][0].erase("template");
  try {
    host.action(GPUAAS_ACTION_ADMIT, c.dump(), flavor_a100());
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
  }
  v1::ActionRequest bad;
  bad.add_tolerations_json("{not json");
  EXPECT_THROW(host.action(GPUAAS_ACTION_ADMIT, small_cluster().dump(), bad), CallFailed);
  c = small_cluster();
  c["spec"] = 7;
  try {
    host.action(GPUAAS_ACTION_SUSPEND, c.dump());
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/spec: missing or not an object");
  }
}

// Scale to zero, apply, check the demand, scale back, apply: the original comes back.
void scale_round_trip(const Json& original, const std::vector<std::string>& zeroed,
                      const std::vector<std::string>& untouched) {
  SCOPED_TRACE(original["metadata"]["name"].get<std::string>());
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto down = host.action(GPUAAS_ACTION_SCALE_TO_ZERO, original.dump());
  ASSERT_EQ(down.actions_size(), 1);
  EXPECT_EQ(Json::parse(down.actions(0).body_json())["metadata"]["resourceVersion"],
            original["metadata"]["resourceVersion"]);
  Json scaled = Json::parse(host.apply(original.dump(), down));
  for (const auto& p : zeroed) EXPECT_EQ(scaled.at(Json::json_pointer(p)), 0) << p;
  for (const auto& p : untouched) {
    EXPECT_EQ(scaled.value(Json::json_pointer(p), Json()),
              original.value(Json::json_pointer(p), Json()))
        << p;
  }
  auto d = host.demand(scaled.dump());
  EXPECT_EQ(d.pod_sets(0).name(), "head");
  EXPECT_EQ(d.pod_sets(0).count(), 1);  // the head stays: the quota reservation stays
  for (int i = 1; i < d.pod_sets_size(); ++i) EXPECT_EQ(d.pod_sets(i).count(), 0);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, scaled.dump()).actions_size(), 0);

  scaled["metadata"]["resourceVersion"] = "77";
  auto up = host.action(GPUAAS_ACTION_SCALE_BACK, scaled.dump());
  ASSERT_EQ(up.actions_size(), 1);
  Json back = Json::parse(host.apply(scaled.dump(), up));
  back["metadata"]["resourceVersion"] = original["metadata"]["resourceVersion"];
  EXPECT_EQ(back, original);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, back.dump()).actions_size(), 0);
}

TEST(RayActions, ScaleToZeroWithoutAutoscalerSetsReplicasAndMin) {
  const std::string g = "/spec/workerGroupSpecs/0";
  scale_round_trip(load("kueue/ray-cluster-sample.yaml", "RayCluster"),
                   {g + "/replicas", g + "/minReplicas"}, {g + "/maxReplicas"});
  scale_round_trip(load("kuberay/ray-cluster.complete.yaml", "RayCluster"),
                   {g + "/replicas", g + "/minReplicas"}, {g + "/maxReplicas"});
  // Absent fields come back absent.
  Json c = small_cluster();
  c["spec"]["workerGroupSpecs"][0].erase("minReplicas");
  c["spec"]["workerGroupSpecs"].push_back(c["spec"]["workerGroupSpecs"][0]);
  c["spec"]["workerGroupSpecs"][1]["groupName"] = "cpu";
  c["spec"]["workerGroupSpecs"][1].erase("replicas");
  scale_round_trip(c, {g + "/replicas", "/spec/workerGroupSpecs/1/replicas"}, {});
}

TEST(RayActions, ScaleToZeroWithAutoscalerActsThroughBounds) {
  const std::string g = "/spec/workerGroupSpecs/0";
  scale_round_trip(load("kuberay/ray-cluster.autoscaler.yaml", "RayCluster"),
                   {g + "/minReplicas", g + "/maxReplicas"}, {g + "/replicas"});
  Json c = small_cluster();  // replicas 2, min 1, max 4
  c["spec"]["enableInTreeAutoscaling"] = true;
  scale_round_trip(c, {g + "/minReplicas", g + "/maxReplicas"}, {g + "/replicas"});
}

TEST(RayActions, ScaleToZeroOfAHeadOnlyClusterIsEmpty) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  c["spec"].erase("workerGroupSpecs");
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, c.dump()).actions_size(), 0);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, c.dump()).actions_size(), 0);
}

TEST(RayActions, RayJobsDoNotScale) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const auto& s : kJobs) {
    for (auto kind : {GPUAAS_ACTION_SCALE_TO_ZERO, GPUAAS_ACTION_SCALE_BACK}) {
      try {
        host.action(kind, load(s.file, s.kind).dump());
        ADD_FAILURE() << s.file;
      } catch (const CallFailed& e) {
        EXPECT_EQ(e.rc(), GPUAAS_RC_NOT_SUPPORTED) << s.file;
      }
    }
  }
}

TEST(RayActions, SuspendOfAScaledDownClusterKeepsTheScaleRecord) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  Json scaled =
      Json::parse(host.apply(c.dump(), host.action(GPUAAS_ACTION_SCALE_TO_ZERO, c.dump())));
  Json suspended =
      Json::parse(host.apply(scaled.dump(), host.action(GPUAAS_ACTION_SUSPEND, scaled.dump())));
  EXPECT_EQ(suspended["spec"]["suspend"], true);
  EXPECT_TRUE(suspended["metadata"]["annotations"].contains("gpuaas.io/scaled-from"));
}

}  // namespace
