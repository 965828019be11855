// Demand of plain Pods: resources as Kubernetes computes them, the labels and priority class,
// pod groups and their size annotation, Pods that are not workloads, and what is refused.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace pod_test;
using gpuaas::plugin::per_pod_milli;

constexpr const char* kGroupLabel = "kueue.x-k8s.io/pod-group-name";
constexpr const char* kCountAnnotation = "kueue.x-k8s.io/pod-group-total-count";
constexpr const char* kCountPointer = "/metadata/annotations/kueue.x-k8s.io~1pod-group-total-count";

v1::WorkloadDemand demand(const Json& pod) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  return host.demand(pod.dump());
}

Json in_group(Json pod, const Json& count) {
  pod["metadata"]["labels"][kGroupLabel] = "sweep";
  if (!count.is_null()) pod["metadata"]["annotations"][kCountAnnotation] = count;
  return pod;
}

TEST(PodPlugin, Descriptor) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.summary(),
            "pod 0.1.0 alpha abi 1.3 gpuaas.v1 | v1 Pod | demand lifecycle admission activity");
}

TEST(PodDemand, APlainPodIsOnePodWithItsResources) {
  Json pod = gated_pod();
  pod["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high";
  pod["spec"]["priorityClassName"] = "system-batch";
  auto d = demand(pod);
  EXPECT_EQ(d.queue_name(), "team-a-queue");
  EXPECT_EQ(d.priority_class(), "high");
  EXPECT_EQ(d.pod_priority_class(), "system-batch");
  EXPECT_EQ(d.group_name(), "");
  EXPECT_EQ(d.group_total(), 0);
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& s = d.pod_sets(0);
  EXPECT_EQ(s.name(), "main");
  EXPECT_EQ(s.count(), 1);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 1000);  // the limit stands in for the request
  EXPECT_EQ(per_pod_milli(s, "cpu"), 2000);
  EXPECT_EQ(per_pod_milli(s, "memory"), 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(s.node_selector().at("zone"), "a");
  EXPECT_EQ(demand(running_pod()).pod_sets(0).count(), 1);  // the same once it runs
}

TEST(PodDemand, InitContainersAndOverhead) {
  Json pod = gated_pod();
  pod["spec"]["initContainers"] = Json::parse(R"([
    {"name":"fetch","image":"i","resources":{"requests":{"cpu":"4"}}},
    {"name":"proxy","image":"i","restartPolicy":"Always","resources":{"requests":{"cpu":"500m"}}}])");
  pod["spec"]["overhead"] = Json::parse(R"({"cpu":"250m","memory":"128Mi"})");
  const auto s = demand(pod).pod_sets(0);
  // max(2 + 0.5 sidecar, 4 before the sidecar started) + 0.25 overhead.
  EXPECT_EQ(per_pod_milli(s, "cpu"), 4250);
  EXPECT_EQ(per_pod_milli(s, "memory"), (1024LL + 128) * 1024 * 1024 * 1000);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 1000);
}

TEST(PodDemand, APodOfAGroupNamesTheGroupAndItsSize) {
  auto d = demand(in_group(gated_pod(), "8"));
  EXPECT_EQ(d.group_name(), "sweep");
  EXPECT_EQ(d.group_total(), 8);
  EXPECT_EQ(d.pod_sets(0).count(), 1);  // the core adds the group's pods up
  EXPECT_EQ(demand(in_group(gated_pod(), "1")).group_total(), 1);
  EXPECT_EQ(demand(in_group(gated_pod(), "2147483647")).group_total(), 2147483647);
}

TEST(PodDemand, ABadGroupSizeIsInvalidInputNamingTheAnnotation) {
  for (const Json& bad : {Json("two"), Json("0"), Json("-1"), Json("1.5"), Json(""), Json(" 2"),
                          Json("2147483648"), Json(3)}) {
    SCOPED_TRACE(bad.dump());
    EXPECT_EQ(invalid_input([&] { demand(in_group(gated_pod(), bad)); }),
              std::string(kCountPointer) + ": want a positive integer, got " + bad.dump());
  }
}

TEST(PodDemand, AGroupWithoutItsSizeOrASizeWithoutAGroupIsInvalidInput) {
  EXPECT_NE(invalid_input([&] {
              demand(in_group(gated_pod(), Json()));
            }).find(std::string(kCountPointer) + ": missing"),
            std::string::npos);
  Json pod = gated_pod();
  pod["metadata"]["annotations"][kCountAnnotation] = "3";
  EXPECT_NE(invalid_input([&] {
              demand(pod);
            }).find("/metadata/labels/kueue.x-k8s.io~1pod-group-name: missing"),
            std::string::npos);
}

TEST(PodDemand, APodWithoutTheQueueLabelIsNotAWorkload) {
  Json pod = gated_pod();
  pod["metadata"].erase("labels");
  FakeHost host(gpuaas_plugin_get_descriptor);
  try {
    host.demand(pod.dump());
    ADD_FAILURE() << "a workload";
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_NOT_SUPPORTED);
    EXPECT_NE(std::string(e.what()).find("kueue.x-k8s.io/queue-name"), std::string::npos);
  }
}

TEST(PodDemand, PodsOfADaemonSetOrOfAQueuedJobAreNotWorkloadsOfTheirOwn) {
  auto owned = [](const char* api_version, const char* kind, bool controller) {
    Json pod = gated_pod();
    pod["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", api_version},
                                                       {"kind", kind},
                                                       {"name", "owner"},
                                                       {"uid", "o-1"},
                                                       {"controller", controller}}});
    return rc_of([&] { demand(pod); });
  };
  EXPECT_EQ(owned("apps/v1", "DaemonSet", true), GPUAAS_RC_NOT_SUPPORTED);
  EXPECT_EQ(owned("batch/v1", "Job", true), GPUAAS_RC_NOT_SUPPORTED);
  EXPECT_EQ(owned("ray.io/v1", "RayCluster", true), GPUAAS_RC_NOT_SUPPORTED);
  // A ReplicaSet's or StatefulSet's pods are admitted one by one or as a group.
  EXPECT_EQ(owned("apps/v1", "ReplicaSet", true), GPUAAS_RC_OK);
  EXPECT_EQ(owned("apps/v1", "StatefulSet", true), GPUAAS_RC_OK);
  EXPECT_EQ(owned("batch/v1", "Job", false), GPUAAS_RC_OK);  // merely owned
}

TEST(PodDemand, MalformedPodsAreInvalidInputNamingThePointer) {
  auto error_of = [](const Json& pod) { return invalid_input([&] { demand(pod); }); };
  Json pod = gated_pod();
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots";
  EXPECT_NE(error_of(pod).find("/spec/containers/0/resources/limits/nvidia.com/gpu"),
            std::string::npos)
      << error_of(pod);
  pod = gated_pod();
  pod["spec"]["containers"] = Json::array();
  EXPECT_EQ(error_of(pod), "/spec/containers: missing or empty");
  pod = gated_pod();
  pod["spec"]["initContainers"] = "fetch";
  EXPECT_EQ(error_of(pod), "/spec/initContainers: not a list");
  pod = gated_pod();
  pod.erase("spec");
  EXPECT_EQ(error_of(pod), "/spec: missing");
  pod = gated_pod();
  pod["spec"]["priorityClassName"] = 7;
  EXPECT_EQ(error_of(pod), "/spec/priorityClassName: want a string, got 7");
  pod = gated_pod();
  pod["metadata"].erase("name");
  EXPECT_EQ(error_of(pod), "/metadata/name: missing");
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(rc_of([&] { host.demand("{not json"); }), GPUAAS_RC_INVALID_INPUT);
}

TEST(PodConfig, UnknownOrMistypedSettingsAreRefused) {
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"threshold": 5})"), CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": "5"})"),
               CallFailed);
  FakeHost host(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 20})");
  EXPECT_EQ(host.demand(gated_pod().dump()).pod_sets(0).count(), 1);
}

}  // namespace
