// Activity from dcgm-exporter's GPU utilization of the job's pods.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace gpuaas;
using kft_test::Json;
using plugin::testing::FakeHost;
using plugin::testing::sample;

const Json& job() {
  static const Json j = kft_test::load("kubeflow-training/simple.yaml", "PyTorchJob");
  return j;  // pytorch-simple in namespace kubeflow
}

v1::MetricSample util(const char* pod, double value, int64_t at_ms, const char* ns = "kubeflow") {
  return sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"namespace", ns}, {"pod", pod}}, value,
                at_ms);
}

v1::WorkloadActivity activity(const std::vector<v1::MetricSample>& samples,
                              const std::string& config = "") {
  FakeHost host(gpuaas_plugin_get_descriptor, config);
  v1::MetricBatch batch;
  for (const auto& s : samples) *batch.add_samples() = s;
  return host.activity(job().dump(), batch);
}

TEST(KubeflowTrainingActivity, UtilizationAboveTheThresholdIsActiveAtTheLatestBusySample) {
  auto a = activity(
      {util("pytorch-simple-master-0", 3, 1000), util("pytorch-simple-worker-0", 87, 2000),
       util("pytorch-simple-worker-0", 60, 3000), util("pytorch-simple-worker-0", 0, 4000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(a.last_active().seconds(), 3);
  EXPECT_EQ(a.evidence(), "DCGM_FI_DEV_GPU_UTIL 60 > 5 on pod pytorch-simple-worker-0 gpu 0");
}

TEST(KubeflowTrainingActivity, AllAtOrBelowTheThresholdIsIdle) {
  auto a = activity(
      {util("pytorch-simple-master-0", 5, 1000), util("pytorch-simple-worker-0", 0, 1000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::IDLE);
  EXPECT_EQ(a.evidence(), "2 DCGM_FI_DEV_GPU_UTIL samples of the job's pods, none above 5 (max 5)");
  // The threshold comes from the configuration.
  EXPECT_EQ(activity({util("pytorch-simple-worker-0", 30, 1000)}, R"({"gpu_util_threshold": 50})")
                .level(),
            v1::WorkloadActivity::IDLE);
}

TEST(KubeflowTrainingActivity, NoRelevantSampleIsUnknown) {
  EXPECT_EQ(activity({}).level(), v1::WorkloadActivity::UNKNOWN);
  // Other metrics, other jobs' pods, other namespaces do not count.
  auto a = activity({sample("DCGM_FI_DEV_FB_USED", {{"pod", "pytorch-simple-worker-0"}}, 900),
                     util("other-job-worker-0", 99, 1000),
                     util("pytorch-simple-worker-0", 99, 1000, "elsewhere")});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::UNKNOWN);
  EXPECT_EQ(a.evidence(), "no DCGM_FI_DEV_GPU_UTIL sample of the job's pods");
}

TEST(KubeflowTrainingActivity, ExportedLabelsNameTheWorkloadPod) {
  // Scraped through Prometheus: pod/namespace are the exporter's, exported_* the job's.
  auto a = activity({sample("DCGM_FI_DEV_GPU_UTIL",
                            {{"gpu", "1"},
                             {"namespace", "gpu-operator"},
                             {"pod", "nvidia-dcgm-exporter-x7"},
                             {"exported_namespace", "kubeflow"},
                             {"exported_pod", "pytorch-simple-worker-0"}},
                            42, 5000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(a.last_active().seconds(), 5);
}

}  // namespace
