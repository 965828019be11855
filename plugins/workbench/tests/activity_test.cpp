// Activity from GPU utilisation, kernel busyness and the culler's last-activity annotation.
#include <limits>

#include "support.hpp"

namespace workbench_test {
namespace {

using A = v1::WorkloadActivity;
using gpuaas::plugin::testing::sample;

constexpr int64_t k18h = 1764439200000;  // 2025-11-29T18:00:00Z in ms

Json gpu_notebook() { return with_resources({{"limits", {{"nvidia.com/gpu", "1"}}}}); }

v1::MetricBatch batch(std::initializer_list<v1::MetricSample> samples) {
  v1::MetricBatch b;
  for (const auto& s : samples) *b.add_samples() = s;
  return b;
}

v1::MetricSample util(double value, int64_t at_ms, const std::string& pod = "nb-0") {
  return sample("DCGM_FI_DEV_GPU_UTIL",
                {{"gpu", "0"}, {"UUID", "GPU-1"}, {"namespace", "team-a"}, {"pod", pod}}, value,
                at_ms);
}

int64_t last_active_ms(const A& a) {
  return a.last_active().seconds() * 1000 + a.last_active().nanos() / 1'000'000;
}

TEST(WorkbenchActivity, GpuUtilAboveTheThresholdIsActive) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(gpu_notebook().dump(),
                         batch({util(3, k18h - 60000), util(87, k18h - 30000), util(2, k18h)}));
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), k18h - 30000);  // the latest sample that showed use
  EXPECT_EQ(a.evidence(), "DCGM_FI_DEV_GPU_UTIL 87 > 5 on pod nb-0");
}

TEST(WorkbenchActivity, GpuUtilAtOrBelowTheThresholdIsIdle) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(gpu_notebook().dump(), batch({util(5, k18h - 30000), util(0, k18h)}));
  EXPECT_EQ(a.level(), A::IDLE);
  EXPECT_FALSE(a.has_last_active());
  // A higher threshold from the configuration.
  FakeHost strict(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 50})");
  EXPECT_EQ(strict.activity(gpu_notebook().dump(), batch({util(40, k18h)})).level(), A::IDLE);
  EXPECT_EQ(strict.activity(gpu_notebook().dump(), batch({util(60, k18h)})).level(), A::ACTIVE);
}

TEST(WorkbenchActivity, ExportedLabelsNameTheNotebookPod) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Scraped without honorLabels: pod/namespace are the exporter's, exported_* the workload's.
  auto s = sample("DCGM_FI_DEV_GPU_UTIL",
                  {{"namespace", "gpu-operator"},
                   {"pod", "nvidia-dcgm-exporter-x7"},
                   {"exported_namespace", "team-a"},
                   {"exported_pod", "nb-0"}},
                  93, k18h);
  EXPECT_EQ(host.activity(gpu_notebook().dump(), batch({s})).level(), A::ACTIVE);
}

TEST(WorkbenchActivity, OtherPodsAndNamespacesDoNotCount) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto other_ns =
      sample("DCGM_FI_DEV_GPU_UTIL", {{"namespace", "team-b"}, {"pod", "nb-0"}}, 99, k18h);
  auto a = host.activity(gpu_notebook().dump(),
                         batch({util(99, k18h, "other-0"), other_ns,
                                sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}}, 99, k18h),
                                sample("DCGM_FI_DEV_FB_USED", {{"pod", "nb-0"}}, 4096, k18h)}));
  EXPECT_EQ(a.level(), A::UNKNOWN);
  EXPECT_EQ(host.activity(gpu_notebook().dump(), v1::MetricBatch()).level(), A::UNKNOWN);
}

TEST(WorkbenchActivity, BusyKernelIsActive) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // jupyter_kernel_busyness: 1 while any kernel's execution_state is "busy".
  auto busy =
      sample("jupyter_kernel_busyness",
             {{"namespace", "team-a"}, {"service_name", "nb"}, {"instance_name", "nb"}}, 1, k18h);
  auto a = host.activity(gpu_notebook().dump(), batch({util(0, k18h), busy}));
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), k18h);
  EXPECT_EQ(a.evidence(), "jupyter_kernel_busyness 1");
  busy.set_value(0);
  EXPECT_EQ(host.activity(gpu_notebook().dump(), batch({busy})).level(), A::IDLE);
}

TEST(WorkbenchActivity, LastActivityAnnotationAloneIsIdleWithItsTime) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = gpu_notebook();
  nb["metadata"]["annotations"] = {
      {"notebooks.kubeflow.org/last-activity", "2025-11-29T17:00:00Z"}};
  auto a = host.activity(nb.dump(), v1::MetricBatch());
  EXPECT_EQ(a.level(), A::IDLE);
  EXPECT_EQ(last_active_ms(a), k18h - 3600000);
  EXPECT_NE(a.evidence().find("notebooks.kubeflow.org/last-activity 2025-11-29T17:00:00Z"),
            std::string::npos)
      << a.evidence();
  // With a quiet GPU as well: still idle since the annotation's time.
  a = host.activity(nb.dump(), batch({util(1, k18h)}));
  EXPECT_EQ(a.level(), A::IDLE);
  EXPECT_EQ(last_active_ms(a), k18h - 3600000);
  // The Jupyter server's own last-activity gauge, when newer, gives the time.
  auto server = sample("jupyter_server_last_activity_timestamp_seconds",
                       {{"namespace", "team-a"}, {"pod", "nb-0"}}, 1764438000.5, k18h);
  a = host.activity(nb.dump(), batch({server}));
  EXPECT_EQ(a.level(), A::IDLE);
  EXPECT_EQ(last_active_ms(a), 1764438000500);
}

TEST(WorkbenchActivity, UseAndAnnotationTogether) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = gpu_notebook();
  nb["metadata"]["annotations"] = {
      {"notebooks.kubeflow.org/last-activity", "2025-11-29T17:00:00Z"}};
  auto a = host.activity(nb.dump(), batch({util(70, k18h - 60000)}));
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), k18h - 60000);
  // A sample without timestamp is as recent as the batch: no older time is claimed.
  a = host.activity(nb.dump(), batch({util(70, 0)}));
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_FALSE(a.has_last_active());
}

TEST(WorkbenchActivity, NotANumberIsNoEvidence) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(gpu_notebook().dump(),
                         batch({util(std::numeric_limits<double>::quiet_NaN(), k18h)}));
  EXPECT_EQ(a.level(), A::UNKNOWN);
  // A last-activity gauge that is no time (0, or beyond year 9999) says nothing either.
  for (double v : {0.0, 1e300, std::numeric_limits<double>::infinity()}) {
    auto server = sample("jupyter_server_last_activity_timestamp_seconds", {{"pod", "nb-0"}}, v);
    EXPECT_EQ(host.activity(gpu_notebook().dump(), batch({server})).level(), A::UNKNOWN) << v;
  }
}

TEST(WorkbenchActivity, MalformedLastActivityIsInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const Json& bad : {Json("yesterday"), Json(1764439200)}) {
    Json nb = gpu_notebook();
    nb["metadata"]["annotations"] = {{"notebooks.kubeflow.org/last-activity", bad}};
    try {
      host.activity(nb.dump(), v1::MetricBatch());
      ADD_FAILURE() << bad.dump();
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
      EXPECT_EQ(std::string(e.what()).rfind(
                    "/metadata/annotations/notebooks.kubeflow.org~1last-activity: ", 0),
                0u)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace workbench_test
