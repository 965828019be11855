// GPU use from dcgm-exporter samples: which samples are the workload's, the busy one, the answer.
#include "gpuaas/plugin/gpu_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gpuaas/plugin/testing.hpp"

namespace gpuaas::plugin {
namespace {

using testing::sample;

bool train_pod(std::string_view pod) { return pod.starts_with("train-"); }

v1::MetricBatch batch(std::initializer_list<v1::MetricSample> samples) {
  v1::MetricBatch b;
  for (const auto& s : samples) *b.add_samples() = s;
  return b;
}

v1::MetricSample util(std::string pod, std::string gpu, double value, int64_t at_ms) {
  return sample(std::string(kGpuUtilMetric),
                {{"pod", std::move(pod)}, {"namespace", "team-a"}, {"gpu", std::move(gpu)}}, value,
                at_ms);
}

TEST(GpuUtil, NoSamplesIsUnknown) {
  const v1::MetricBatch b;
  const GpuUtil u = gpu_util(Samples(b), 5, "team-a", train_pod);
  EXPECT_EQ(u.samples, 0);
  EXPECT_EQ(u.max, 0);
  EXPECT_EQ(u.busy, nullptr);
  const auto a = gpu_util_activity(u, 5, "the Job's pods");
  EXPECT_EQ(a.level(), v1::WorkloadActivity::UNKNOWN);
  EXPECT_EQ(a.evidence(), "no DCGM_FI_DEV_GPU_UTIL sample of the Job's pods");
}

TEST(GpuUtil, NaNAndOtherMetricsSayNothing) {
  const auto b = batch({util("train-0", "0", std::nan(""), 1000),
                        sample("DCGM_FI_DEV_FB_USED", {{"pod", "train-0"}}, 900, 1000),
                        sample("dcgm_fi_dev_gpu_util", {{"pod", "train-0"}}, 90, 1000)});
  const GpuUtil u = gpu_util(Samples(b), 5, "team-a", train_pod);
  EXPECT_EQ(u.samples, 0);
  EXPECT_EQ(gpu_util_activity(u, 5, "the Job's pods").level(), v1::WorkloadActivity::UNKNOWN);
}

TEST(GpuUtil, SeveralGpusTheLatestBusyOneDecides) {
  // Four GPUs of two pods: the highest is not the latest above the threshold.
  const auto b = batch({util("train-0", "0", 97, 1000), util("train-0", "1", 2, 3000),
                        util("train-1", "2", 40, 2000), util("train-1", "3", 60.5, 1500)});
  const GpuUtil u = gpu_util(Samples(b), 5, "team-a", train_pod);
  EXPECT_EQ(u.samples, 4);
  EXPECT_EQ(u.max, 97);
  ASSERT_NE(u.busy, nullptr);
  EXPECT_EQ(Samples::label(*u.busy, "gpu"), "2");
  const auto a = gpu_util_activity(u, 5, "the Job's pods");
  EXPECT_EQ(a.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(a.evidence(), "DCGM_FI_DEV_GPU_UTIL 40 > 5 on pod train-1 gpu 2");
  EXPECT_EQ(a.last_active().seconds(), 2);
}

TEST(GpuUtil, SeveralGpusAllAtOrBelowTheThresholdIsIdle) {
  const auto b = batch({util("train-0", "0", 4.5, 1000), util("train-0", "1", 5, 1000),
                        util("train-1", "0", 0, 1000)});
  const GpuUtil u = gpu_util(Samples(b), 5, "team-a", train_pod);
  EXPECT_EQ(u.samples, 3);
  EXPECT_EQ(u.max, 5);
  EXPECT_EQ(u.busy, nullptr);  // equal to the threshold is not above it
  const auto a = gpu_util_activity(u, 5, "the job's pods");
  EXPECT_EQ(a.level(), v1::WorkloadActivity::IDLE);
  EXPECT_EQ(a.evidence(), "3 DCGM_FI_DEV_GPU_UTIL samples of the job's pods, none above 5 (max 5)");
  EXPECT_FALSE(a.has_last_active());
}

TEST(GpuUtil, OtherPodsAndNamespacesAreLeftOut) {
  const auto b = batch(
      {util("eval-0", "0", 99, 1000),  // not the workload's pod
       sample(std::string(kGpuUtilMetric), {{"pod", "train-0"}, {"namespace", "team-b"}}, 99, 1000),
       // relabelled: the exporter's own pod and namespace are not the GPU's
       sample(std::string(kGpuUtilMetric),
              {{"pod", "dcgm-exporter-x"},
               {"namespace", "monitoring"},
               {"exported_pod", "train-0"},
               {"exported_namespace", "team-a"}},
              3, 1000)});
  const GpuUtil u = gpu_util(Samples(b), 5, "team-a", train_pod);
  EXPECT_EQ(u.samples, 1);
  EXPECT_EQ(u.max, 3);
  EXPECT_EQ(u.busy, nullptr);
}

TEST(GpuUtil, MissingLabelsCount) {
  // No pod, no namespace, no gpu label: nothing says the sample is another workload's.
  const auto b = batch({sample(std::string(kGpuUtilMetric), {}, 30, 4000)});
  const GpuUtil u = gpu_util(Samples(b), 5, "team-a", train_pod);
  EXPECT_EQ(u.samples, 1);
  ASSERT_NE(u.busy, nullptr);
  EXPECT_EQ(gpu_util_activity(u, 5, "the Job's pods").evidence(), "DCGM_FI_DEV_GPU_UTIL 30 > 5");

  // A workload without a namespace takes every namespace.
  const auto elsewhere = batch({util("train-0", "0", 1, 1000)});
  EXPECT_EQ(gpu_util(Samples(elsewhere), 5, "", train_pod).samples, 1);
}

}  // namespace
}  // namespace gpuaas::plugin
