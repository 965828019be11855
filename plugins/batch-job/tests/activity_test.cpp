// Activity from dcgm-exporter's GPU utilization of the Job's pods, recognised by the names the
// Job controller gives them.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace batch_job_test;
using gpuaas::plugin::testing::sample;

v1::MetricSample util(const std::string& pod, double value, int64_t at_ms,
                      const char* ns = "team-a") {
  return sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"namespace", ns}, {"pod", pod}}, value,
                at_ms);
}

v1::WorkloadActivity activity(const Json& job, const std::vector<v1::MetricSample>& samples,
                              const std::string& config = "") {
  FakeHost host(gpuaas_plugin_get_descriptor, config);
  v1::MetricBatch batch;
  for (const auto& s : samples) *batch.add_samples() = s;
  return host.activity(job.dump(), batch);
}

Json named(const std::string& name, bool indexed = false) {
  Json o = gpu_job();
  o["metadata"]["name"] = name;
  if (indexed) o["spec"]["completionMode"] = "Indexed";
  return o;
}

TEST(BatchJobActivity, UtilizationAboveTheThresholdIsActiveAtTheLatestBusySample) {
  auto a = activity(gpu_job(), {util("train-x7k2q", 3, 1000), util("train-b9zr4", 87, 2000),
                                util("train-b9zr4", 60, 3000), util("train-b9zr4", 0, 4000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(a.last_active().seconds(), 3);
  EXPECT_EQ(a.evidence(), "DCGM_FI_DEV_GPU_UTIL 60 > 5 on pod train-b9zr4 gpu 0");
}

TEST(BatchJobActivity, AllAtOrBelowTheThresholdIsIdle) {
  auto a = activity(gpu_job(), {util("train-x7k2q", 5, 1000), util("train-b9zr4", 0, 1000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::IDLE);
  EXPECT_EQ(a.evidence(), "2 DCGM_FI_DEV_GPU_UTIL samples of the Job's pods, none above 5 (max 5)");
  EXPECT_EQ(
      activity(gpu_job(), {util("train-x7k2q", 30, 1000)}, R"({"gpu_util_threshold": 50})").level(),
      v1::WorkloadActivity::IDLE);
}

TEST(BatchJobActivity, PodsOfOtherJobsNamespacesAndMetricsDoNotCount) {
  auto a = activity(gpu_job(), {
                                   util("train-eval-x7k2q", 99, 1000),  // Job "train-eval"
                                   util("train-0-x7k2q", 99, 1000),     // not an Indexed Job
                                   util("trainer-x7k2q", 99, 1000),
                                   util("train-x7k2", 99, 1000),
                                   util("train-x7k2q", 99, 1000, "elsewhere"),
                                   sample("DCGM_FI_DEV_FB_USED", {{"pod", "train-x7k2q"}}, 900),
                               });
  EXPECT_EQ(a.level(), v1::WorkloadActivity::UNKNOWN);
  EXPECT_EQ(a.evidence(), "no DCGM_FI_DEV_GPU_UTIL sample of the Job's pods");
  EXPECT_EQ(activity(gpu_job(), {}).level(), v1::WorkloadActivity::UNKNOWN);
}

TEST(BatchJobActivity, IndexedJobPodsCarryTheirIndex) {
  const Json job = named("train", true);
  EXPECT_EQ(activity(job, {util("train-12-x7k2q", 99, 1000)}).level(),
            v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(activity(job, {util("train-x7k2q", 99, 1000), util("train-a-x7k2q", 99, 1000),
                           util("train--x7k2q", 99, 1000)})
                .level(),
            v1::WorkloadActivity::UNKNOWN);
}

TEST(BatchJobActivity, LongNamesAreCutAsTheControllerCutsThem) {
  const std::string name(60, 'j');  // 63 is the limit; generated names keep 58 before the suffix
  // "<name>-" cut at 58: the dash goes first.
  EXPECT_EQ(activity(named(name), {util(std::string(58, 'j') + "x7k2q", 99, 1000)}).level(),
            v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(activity(named(name), {util(name + "-x7k2q", 99, 1000)}).level(),
            v1::WorkloadActivity::UNKNOWN);
  // Indexed: the name gives way to the index ("-7-" is 3 characters of the 58).
  EXPECT_EQ(
      activity(named(name, true), {util(std::string(55, 'j') + "-7-x7k2q", 99, 1000)}).level(),
      v1::WorkloadActivity::ACTIVE);
}

TEST(BatchJobActivity, ExportedLabelsNameTheWorkloadPod) {
  auto a = activity(gpu_job(), {sample("DCGM_FI_DEV_GPU_UTIL",
                                       {{"gpu", "1"},
                                        {"namespace", "gpu-operator"},
                                        {"pod", "nvidia-dcgm-exporter-x7"},
                                        {"exported_namespace", "team-a"},
                                        {"exported_pod", "train-x7k2q"}},
                                       42, 5000)});
  EXPECT_EQ(a.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(a.last_active().seconds(), 5);
}

}  // namespace
