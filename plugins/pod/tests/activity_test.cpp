// Activity from dcgm-exporter's GPU utilization of the Pod itself.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace pod_test;
using gpuaas::plugin::testing::sample;

v1::MetricSample util(const std::string& pod, double value, int64_t at_ms,
                      const char* ns = "team-a") {
  return sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"namespace", ns}, {"pod", pod}}, value,
                at_ms);
}

v1::WorkloadActivity activity(const std::vector<v1::MetricSample>& samples,
                              const std::string& config = "") {
  FakeHost host(gpuaas_plugin_get_descriptor, config);
  v1::MetricBatch batch;
  for (const auto& s : samples) *batch.add_samples() = s;
  return host.activity(running_pod().dump(), batch);
}

TEST(PodActivity, UtilizationAboveTheThresholdIsActiveAtTheLatestBusySample) {
  auto a = activity({util("train", 87, 2000), util("train", 60, 3000), util("train", 0, 4000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(a.last_active().seconds(), 3);
  EXPECT_EQ(a.evidence(), "DCGM_FI_DEV_GPU_UTIL 60 > 5 on pod train gpu 0");
}

TEST(PodActivity, AtOrBelowTheThresholdIsIdle) {
  auto a = activity({util("train", 5, 1000), util("train", 1, 2000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::IDLE);
  EXPECT_EQ(a.evidence(), "2 DCGM_FI_DEV_GPU_UTIL samples of the Pod, none above 5 (max 5)");
  EXPECT_EQ(activity({util("train", 30, 1000)}, R"({"gpu_util_threshold": 50})").level(),
            v1::WorkloadActivity::IDLE);
}

TEST(PodActivity, OtherPodsAndNamespacesDoNotCount) {
  auto a = activity(
      {util("train-2", 99, 1000), util("trai", 99, 1000), util("train", 99, 1000, "elsewhere")});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::UNKNOWN);
  EXPECT_EQ(a.evidence(), "no DCGM_FI_DEV_GPU_UTIL sample of the Pod");
}

}  // namespace
