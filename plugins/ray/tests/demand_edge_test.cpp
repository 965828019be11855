// Demand edge cases: KubeRay's replica arithmetic, resource shapes, RayJob submission modes,
// and malformed objects, each refused with InvalidInput naming the JSON pointer.
#include "support.hpp"

namespace {

using namespace ray_test;

constexpr int64_t kGi = 1024LL * 1024 * 1024;

// --- KubeRay's replica arithmetic ---

TEST(RayClusterDemand, ReplicasAreClampedAsKubeRayDoes) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  Json& g = c["spec"]["workerGroupSpecs"][0];
  auto count = [&] { return host.demand(c.dump()).pod_sets(1); };
  EXPECT_EQ(count().count(), 2);
  EXPECT_EQ(count().min_count(), 1);
  g["replicas"] = 20;  // above maxReplicas 4
  EXPECT_EQ(count().count(), 4);
  g["replicas"] = 0;  // below minReplicas 1
  EXPECT_EQ(count().count(), 1);
  g.erase("replicas");  // CRD default 0, clamped to minReplicas
  g["minReplicas"] = 3;
  EXPECT_EQ(count().count(), 3);
  g.erase("minReplicas");
  g.erase("maxReplicas");  // defaults 0 and 2^31-1
  EXPECT_EQ(count().count(), 0);
  g["replicas"] = 2;
  g["numOfHosts"] = 4;  // multi-host replicas: pods = replicas x hosts
  g["minReplicas"] = 1;
  EXPECT_EQ(count().count(), 8);
  EXPECT_EQ(count().min_count(), 4);
  g["suspend"] = true;  // a suspended group runs no pods
  EXPECT_EQ(count().count(), 0);
}

TEST(RayClusterDemand, ReplicaCountsAreKubernetesInt32) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  Json& g = c["spec"]["workerGroupSpecs"][0];
  g.erase("maxReplicas");
  g["replicas"] = 2147483647;
  EXPECT_EQ(host.demand(c.dump()).pod_sets(1).count(), 2147483647);
  g["replicas"] = 2147483648LL;
  EXPECT_EQ(
      demand_error(host, c.dump()),
      "/spec/workerGroupSpecs/0/replicas: 2147483648 is above 2147483647 (a Kubernetes int32)");
  g["replicas"] = 18446744073709551615ULL;
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/0/replicas"),
            std::string::npos);
  g["replicas"] = -1;
  EXPECT_NE(demand_error(host, c.dump())
                .find("/spec/workerGroupSpecs/0/replicas: want a "
                      "non-negative integer"),
            std::string::npos);
  g["replicas"] = 1;
  g["maxReplicas"] = 4294967296LL;
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/0/maxReplicas"),
            std::string::npos);
  g["maxReplicas"] = 2147483647;
  g["replicas"] = 2147483647;
  g["numOfHosts"] = 2;  // 2^32-2 pods
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/0/numOfHosts"),
            std::string::npos);
}

TEST(RayClusterDemand, MinAboveMaxIsRefused) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  c["spec"]["workerGroupSpecs"][0]["minReplicas"] = 5;
  EXPECT_EQ(demand_error(host, c.dump()),
            "/spec/workerGroupSpecs/0/minReplicas: 5 is above maxReplicas 4");
}

// --- resources ---

TEST(RayClusterDemand, ResourceShapes) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  Json& res = c["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"];
  // Limits without requests: the limit is the request.
  EXPECT_EQ(milli(host.demand(c.dump()).pod_sets(1), "nvidia.com/gpu"), 1000);
  // Requests without limits.
  res = {{"requests", {{"nvidia.com/gpu", "2"}, {"cpu", "250m"}}}};
  auto w = host.demand(c.dump()).pod_sets(1);
  EXPECT_EQ(milli(w, "nvidia.com/gpu"), 2000);
  EXPECT_EQ(milli(w, "cpu"), 250);
  // A fractional GPU (e.g. a time-sliced or HAMi-style share).
  res = {{"limits", {{"nvidia.com/gpu", "0.5"}}}};
  EXPECT_EQ(milli(host.demand(c.dump()).pod_sets(1), "nvidia.com/gpu"), 500);
  // MIG profiles are resources of their own.
  res = {{"limits", {{"nvidia.com/mig-1g.10gb", 2}}}};
  w = host.demand(c.dump()).pod_sets(1);
  EXPECT_EQ(milli(w, "nvidia.com/mig-1g.10gb"), 2000);
  EXPECT_EQ(milli(w, "nvidia.com/gpu"), 0);
  // A malformed quantity names where it is.
  res = {{"limits", {{"nvidia.com/gpu", "lots"}}}};
  EXPECT_NE(demand_error(host, c.dump())
                .find("/spec/workerGroupSpecs/0/template/spec/containers/0/resources/limits/"
                      "nvidia.com/gpu"),
            std::string::npos);
  // No resources at all: a pod set with nothing per pod.
  c["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0].erase("resources");
  EXPECT_EQ(host.demand(c.dump()).pod_sets(1).per_pod_size(), 0);
}

TEST(RayClusterDemand, QueueAndPriorityFromKueueLabels) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  c["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "gpu-queue"},
                             {"kueue.x-k8s.io/priority-class", "high"}};
  auto d = host.demand(c.dump());
  EXPECT_EQ(d.queue_name(), "gpu-queue");
  EXPECT_EQ(d.priority_class(), "high");
}

// --- malformed objects ---

TEST(RayClusterDemand, MalformedObjectsAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_NE(demand_error(host, R"({"apiVersion": )").find("object JSON"), std::string::npos);
  EXPECT_NE(demand_error(host, "[]"), "");
  Json c = small_cluster();
  c["spec"]["headGroupSpec"].erase("template");
  EXPECT_EQ(demand_error(host, c.dump()), "/spec/headGroupSpec/template/spec: missing");
  c = small_cluster();
  c["spec"]["workerGroupSpecs"][0].erase("template");
  EXPECT_EQ(demand_error(host, c.dump()), "/spec/workerGroupSpecs/0/template/spec: missing");
  c = small_cluster();
  c["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"] = Json::array();
  EXPECT_EQ(demand_error(host, c.dump()),
            "/spec/workerGroupSpecs/0/template/spec/containers: missing or empty");
  c = small_cluster();
  c["spec"]["workerGroupSpecs"][0]["replicas"] = "3";
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/0/replicas"),
            std::string::npos);
  c = small_cluster();
  c["spec"]["workerGroupSpecs"][0]["replicas"] = 1.5;
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/0/replicas"),
            std::string::npos);
  c = small_cluster();
  c["spec"]["workerGroupSpecs"] = {{"groupName", "gpu"}};
  EXPECT_EQ(demand_error(host, c.dump()), "/spec/workerGroupSpecs: not a list");
  c = small_cluster();
  c["spec"]["workerGroupSpecs"][0].erase("groupName");
  EXPECT_EQ(demand_error(host, c.dump()),
            "/spec/workerGroupSpecs/0/groupName: missing or not a string");
  c = small_cluster();
  c["spec"]["workerGroupSpecs"].push_back(c["spec"]["workerGroupSpecs"][0]);
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/1/groupName"),
            std::string::npos);
  c = small_cluster();
  c["spec"]["workerGroupSpecs"][0]["groupName"] = "head";
  EXPECT_NE(demand_error(host, c.dump()).find("/spec/workerGroupSpecs/0/groupName"),
            std::string::npos);
  c = small_cluster();
  c["spec"]["enableInTreeAutoscaling"] = "yes";
  EXPECT_EQ(demand_error(host, c.dump()),
            "/spec/enableInTreeAutoscaling: want true or false, got \"yes\"");
  c = small_cluster();
  c["spec"]["headGroupSpec"]["template"]["spec"] = "pod";
  EXPECT_EQ(demand_error(host, c.dump()), "/spec/headGroupSpec/template/spec: not an object");
  c = small_cluster();
  c["kind"] = "RayService";
  EXPECT_EQ(demand_error(host, c.dump()), "/kind: RayService is not a RayCluster or a RayJob");
  c = small_cluster();
  c.erase("spec");
  EXPECT_EQ(demand_error(host, c.dump()), "/spec/headGroupSpec/template/spec: missing");
}

// --- RayJob specifics ---

TEST(RayJobDemand, SubmissionModes) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json j = small_job();
  auto names = [&] {
    std::vector<std::string> n;
    const auto d = host.demand(j.dump());
    for (const auto& s : d.pod_sets()) n.push_back(s.name());
    return n;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(), (V{"head", "gpu", "submitter"}));  // K8sJobMode is the default
  j["spec"]["submissionMode"] = "HTTPMode";
  EXPECT_EQ(names(), (V{"head", "gpu"}));
  j["spec"]["submissionMode"] = "InteractiveMode";
  EXPECT_EQ(names(), (V{"head", "gpu"}));
  j["spec"]["submissionMode"] = "SidecarMode";
  EXPECT_EQ(names(), (V{"head", "gpu"}));
  j["spec"]["submissionMode"] = "CarrierPigeonMode";
  EXPECT_EQ(demand_error(host, j.dump()),
            "/spec/submissionMode: unknown mode \"CarrierPigeonMode\"");
  j["spec"]["submissionMode"] = "K8sJobMode";
  j["spec"]["submitterPodTemplate"] = Json::parse(R"({"spec":{"containers":[{"name":"s",
      "resources":{"requests":{"cpu":"2","memory":"1Gi"}}}],"restartPolicy":"Never"}})");
  auto d = host.demand(j.dump());
  EXPECT_EQ(milli(pod_set(d, "submitter"), "cpu"), 2000);
  EXPECT_EQ(milli(pod_set(d, "submitter"), "memory"), kGi * 1000);
  j["spec"]["submitterPodTemplate"] = Json::object();
  EXPECT_EQ(demand_error(host, j.dump()), "/spec/submitterPodTemplate/spec: missing");
}

TEST(RayJobDemand, ClusterSelectorUsesAnExistingCluster) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json j = small_job();
  j["spec"].erase("rayClusterSpec");
  j["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  auto d = host.demand(j.dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).name(), "submitter");
  // It runs on that cluster: a cluster at zero is woken for it.
  EXPECT_EQ(d.runs_on().kind(), "RayCluster");
  EXPECT_EQ(d.runs_on().name(), "shared");
  EXPECT_EQ(d.runs_on().namespace_(), j["metadata"]["namespace"].get<std::string>());
  j["spec"]["submissionMode"] = "HTTPMode";
  EXPECT_EQ(host.demand(j.dump()).pod_sets_size(), 0);
  // An empty selector selects nothing: the job needs its own cluster spec.
  j["spec"]["clusterSelector"] = Json::object();
  EXPECT_EQ(demand_error(host, j.dump()), "/spec/rayClusterSpec: missing");
  j["spec"]["clusterSelector"] = "shared";
  EXPECT_EQ(demand_error(host, j.dump()), "/spec/clusterSelector: not an object");
}

TEST(RayJobDemand, ErrorsNameTheRayClusterSpecPointers) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json j = small_job();
  j["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = 2147483648LL;
  EXPECT_EQ(demand_error(host, j.dump()),
            "/spec/rayClusterSpec/workerGroupSpecs/0/replicas: 2147483648 is above 2147483647 "
            "(a Kubernetes int32)");
  j = small_job();
  j["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["groupName"] = "submitter";
  EXPECT_NE(demand_error(host, j.dump()).find("submitter"), std::string::npos);
  j = small_job();
  j["spec"]["rayClusterSpec"] = 3;
  EXPECT_EQ(demand_error(host, j.dump()), "/spec/rayClusterSpec: not an object");
}

}  // namespace
