// Demand of every published RayCluster and RayJob sample, with numbers worked out by hand from
// the YAML; the descriptor and the configuration.
#include "support.hpp"

namespace {

using namespace ray_test;

constexpr int64_t kGi = 1024LL * 1024 * 1024;
constexpr int64_t kMi = 1024LL * 1024;

TEST(RayDescriptor, KindsAndCapabilities) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.summary(),
            "ray 0.1.0 stable abi 1.3 gpuaas.v1 | ray.io/v1 RayCluster, ray.io/v1 RayJob | demand "
            "lifecycle admission scale-to-zero activity");
}

TEST(RayConfig, UnknownKeysAndWrongTypesFailAtCreate) {
  EXPECT_NO_THROW(FakeHost(gpuaas_plugin_get_descriptor,
                           R"({"gpu_util_threshold": 10, "ray_metrics": false,
                               "ignored_tasks": ["ServeController.run_control_loop"]})"));
  try {
    FakeHost host(gpuaas_plugin_get_descriptor, R"({"gpu_util_treshold": 10})");
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_NE(std::string(e.what()).find("unknown setting \"gpu_util_treshold\""),
              std::string::npos);
  }
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": "5"})"),
               CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 101})"),
               CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"ray_metrics": 1})"), CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"ignored_tasks": [1]})"), CallFailed);
}

// --- the published samples ---

TEST(RayClusterDemand, KueueSample) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kueue/ray-cluster-sample.yaml", "RayCluster").dump());
  EXPECT_EQ(d.queue_name(), "user-queue");
  ASSERT_EQ(d.pod_sets_size(), 2);
  const auto& head = d.pod_sets(0);
  EXPECT_EQ(head.name(), "head");
  EXPECT_EQ(head.count(), 1);
  EXPECT_EQ(milli(head, "cpu"), 1000);
  EXPECT_EQ(milli(head, "memory"), 2'000'000'000'000);  // "2G"
  EXPECT_EQ(milli(head, "nvidia.com/gpu"), 0);
  const auto& w = d.pod_sets(1);
  EXPECT_EQ(w.name(), "small-group");
  EXPECT_EQ(w.count(), 1);
  EXPECT_EQ(w.min_count(), 0);  // minReplicas 1 == count: no partial admission
  EXPECT_EQ(milli(w, "cpu"), 1000);
  EXPECT_EQ(milli(w, "memory"), 1'000'000'000'000);  // "1G"
}

TEST(RayClusterDemand, KubeRayCompleteUsesRequestsNotLimits) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kuberay/ray-cluster.complete.yaml", "RayCluster").dump());
  EXPECT_EQ(d.queue_name(), "");
  ASSERT_EQ(d.pod_sets_size(), 2);
  EXPECT_EQ(milli(d.pod_sets(0), "cpu"), 500);  // requests 500m, limits 1
  EXPECT_EQ(milli(d.pod_sets(0), "memory"), 2 * kGi * 1000);
  EXPECT_EQ(d.pod_sets(1).name(), "small-group");
  EXPECT_EQ(d.pod_sets(1).count(), 1);
  EXPECT_EQ(milli(d.pod_sets(1), "cpu"), 500);
  EXPECT_EQ(milli(d.pod_sets(1), "memory"), 1 * kGi * 1000);
}

TEST(RayClusterDemand, AutoscalerSampleCountsTheAutoscalerContainer) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kuberay/ray-cluster.autoscaler.yaml", "RayCluster").dump());
  ASSERT_EQ(d.pod_sets_size(), 2);
  // ray-head requests 1 CPU / 2Gi; autoscalerOptions.resources requests 500m / 512Mi.
  EXPECT_EQ(milli(d.pod_sets(0), "cpu"), 1500);
  EXPECT_EQ(milli(d.pod_sets(0), "memory"), (2 * kGi + 512 * kMi) * 1000);
  // replicas 0, minReplicas 0: scale from zero.
  EXPECT_EQ(d.pod_sets(1).count(), 0);
  EXPECT_EQ(milli(d.pod_sets(1), "cpu"), 1000);
  EXPECT_EQ(milli(d.pod_sets(1), "memory"), 1 * kGi * 1000);
}

TEST(RayClusterDemand, AutoscalerDefaultsWithoutOptions) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  c["spec"]["enableInTreeAutoscaling"] = true;
  auto d = host.demand(c.dump());
  EXPECT_EQ(milli(d.pod_sets(0), "cpu"), 1500);                 // 1 + KubeRay's default 500m
  EXPECT_EQ(milli(d.pod_sets(0), "memory"), 512 * kMi * 1000);  // KubeRay's default 512Mi
}

TEST(RayJobDemand, KueueSample) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kueue/ray-job-sample.yaml", "RayJob").dump());
  EXPECT_EQ(d.queue_name(), "user-queue");
  ASSERT_EQ(d.pod_sets_size(), 3);
  EXPECT_EQ(d.pod_sets(0).name(), "head");
  EXPECT_EQ(milli(d.pod_sets(0), "cpu"), 1000);
  EXPECT_EQ(milli(d.pod_sets(0), "memory"), 0);
  EXPECT_EQ(d.pod_sets(1).name(), "small-group");
  EXPECT_EQ(d.pod_sets(1).count(), 1);
  EXPECT_EQ(milli(d.pod_sets(1), "cpu"), 1000);
  // No submitterPodTemplate: Kueue's default submitter, requests 500m / 200Mi.
  EXPECT_EQ(d.pod_sets(2).name(), "submitter");
  EXPECT_EQ(d.pod_sets(2).count(), 1);
  EXPECT_EQ(milli(d.pod_sets(2), "cpu"), 500);
  EXPECT_EQ(milli(d.pod_sets(2), "memory"), 200 * kMi * 1000);
}

TEST(RayJobDemand, KubeRaySample) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kuberay/ray-job.sample.yaml", "RayJob").dump());
  ASSERT_EQ(d.pod_sets_size(), 3);
  EXPECT_EQ(milli(pod_set(d, "head"), "cpu"), 1000);
  EXPECT_EQ(milli(pod_set(d, "head"), "memory"), 2 * kGi * 1000);
  EXPECT_EQ(milli(pod_set(d, "small-group"), "cpu"), 200);  // requests 200m, limits 1
  EXPECT_EQ(milli(pod_set(d, "small-group"), "memory"), 0);
  EXPECT_EQ(milli(pod_set(d, "submitter"), "cpu"), 500);
}

TEST(RayJobDemand, BatchInferenceHeadOnlyWithGpus) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kuberay/ray-job.batch-inference.yaml", "RayJob").dump());
  ASSERT_EQ(d.pod_sets_size(), 2);  // no workerGroupSpecs
  const auto& head = d.pod_sets(0);
  EXPECT_EQ(head.count(), 1);
  EXPECT_EQ(milli(head, "nvidia.com/gpu"), 4000);
  EXPECT_EQ(milli(head, "cpu"), 54000);
  EXPECT_EQ(milli(head, "memory"), 54 * kGi * 1000);
  EXPECT_EQ(head.node_selector().at("cloud.google.com/gke-accelerator"), "nvidia-tesla-t4");
  EXPECT_EQ(d.pod_sets(1).name(), "submitter");
}

TEST(RayJobDemand, KueueToySample) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kuberay/ray-job.kueue-toy-sample.yaml", "RayJob").dump());
  EXPECT_EQ(d.queue_name(), "");  // no queue label in the file
  ASSERT_EQ(d.pod_sets_size(), 3);
  EXPECT_EQ(milli(pod_set(d, "head"), "memory"), 2 * kGi * 1000);
  EXPECT_EQ(pod_set(d, "small-group").count(), 1);
  EXPECT_EQ(milli(pod_set(d, "small-group"), "memory"), 1 * kGi * 1000);
}

TEST(RayJobDemand, PytorchImageClassifierFourGpuWorkers) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(load("kuberay/ray-job.pytorch-image-classifier.yaml", "RayJob").dump());
  ASSERT_EQ(d.pod_sets_size(), 3);
  EXPECT_EQ(milli(pod_set(d, "head"), "nvidia.com/gpu"), 0);
  EXPECT_EQ(milli(pod_set(d, "head"), "memory"), 8'000'000'000'000);  // "8G"
  const auto& g = pod_set(d, "gpu-group");
  EXPECT_EQ(g.count(), 4);
  EXPECT_EQ(g.min_count(), 0);  // minReplicas 4 == count
  EXPECT_EQ(milli(g, "nvidia.com/gpu"), 1000);
  EXPECT_EQ(milli(g, "cpu"), 1000);
  EXPECT_EQ(milli(g, "memory"), 8'000'000'000'000);
}

}  // namespace
