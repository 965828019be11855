// Activity of a Ray cluster from the samples the host passes: dcgm-exporter GPU utilisation of
// its pods, Ray's own node GPU metric, running Ray tasks and Ray Serve requests.
#include "support.hpp"

namespace {

using namespace ray_test;
using gpuaas::plugin::testing::sample;
using A = v1::WorkloadActivity;

constexpr int64_t kT0 = 1'780'000'000'000;  // Unix ms

A activity(const std::vector<v1::MetricSample>& samples, const Json& o = small_cluster(),
           const std::string& config = "") {
  FakeHost host(gpuaas_plugin_get_descriptor, config);
  v1::MetricBatch batch;
  for (const auto& s : samples) *batch.add_samples() = s;
  return host.activity(o.dump(), batch);
}

v1::MetricSample gpu_util(double v, int64_t at, const char* pod = "rc-gpu-worker-abcde") {
  return sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"namespace", "team-a"}, {"pod", pod}}, v,
                at);
}

int64_t last_active_ms(const A& a) {
  return a.last_active().seconds() * 1000 + a.last_active().nanos() / 1'000'000;
}

TEST(RayActivity, NoRelevantSampleIsUnknown) {
  EXPECT_EQ(activity({}).level(), A::UNKNOWN);
  auto a = activity({sample("DCGM_FI_DEV_FB_USED", {{"pod", "p"}}, 1000, kT0),
                     sample("container_cpu_usage_seconds_total", {{"pod", "p"}}, 3, kT0)});
  EXPECT_EQ(a.level(), A::UNKNOWN);
  EXPECT_EQ(a.evidence(), "no GPU or Ray sample of this workload");
}

TEST(RayActivity, GpuUtilisationAboveTheThreshold) {
  auto a = activity({gpu_util(3, kT0), gpu_util(87, kT0 + 15'000), gpu_util(2, kT0 + 30'000)});
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), kT0 + 15'000);
  EXPECT_NE(a.evidence().find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",namespace=\"team-a\","
                              "pod=\"rc-gpu-worker-abcde\"}=87: above 5%"),
            std::string::npos)
      << a.evidence();
  // At or below the threshold: idle.
  a = activity({gpu_util(5, kT0), gpu_util(0, kT0 + 15'000)});
  EXPECT_EQ(a.level(), A::IDLE);
  EXPECT_EQ(a.evidence(), "2 samples (DCGM_FI_DEV_GPU_UTIL), none shows use");
  // The threshold comes from the configuration.
  EXPECT_EQ(activity({gpu_util(30, kT0)}, small_cluster(), R"({"gpu_util_threshold": 50})").level(),
            A::IDLE);
  EXPECT_EQ(activity({gpu_util(60, kT0)}, small_cluster(), R"({"gpu_util_threshold": 50})").level(),
            A::ACTIVE);
}

TEST(RayActivity, GraphicsEngineActiveIsARatio) {
  auto ratio = [](double v) {
    return sample("DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                  {{"gpu", "1"}, {"exported_namespace", "team-a"}, {"exported_pod", "rc-head-x"}},
                  v, kT0);
  };
  EXPECT_EQ(activity({ratio(0.02)}).level(), A::IDLE);  // 2% < 5%
  EXPECT_EQ(activity({ratio(0.40)}).level(), A::ACTIVE);
}

TEST(RayActivity, ForeignAndBlankSamplesDoNotCount) {
  // Another namespace's pod, a GPU no pod holds, dcgm's blank sentinel, NaN: none is evidence.
  auto a =
      activity({sample("DCGM_FI_DEV_GPU_UTIL", {{"namespace", "other"}, {"pod", "p"}}, 99, kT0),
                sample("DCGM_FI_DEV_GPU_UTIL", {{"namespace", ""}, {"pod", ""}}, 99, kT0),
                gpu_util(9223372036854775794.0, kT0), gpu_util(std::nan(""), kT0)});
  EXPECT_EQ(a.level(), A::UNKNOWN);
}

TEST(RayActivity, RayTasksRunning) {
  auto tasks = [](const char* state, double v, const char* name = "train_fn") {
    return sample("ray_tasks", {{"Name", name}, {"State", state}, {"IsRetry", "0"}}, v, kT0);
  };
  auto a = activity({tasks("FINISHED", 120), tasks("RUNNING", 3)});
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_NE(a.evidence().find("tasks running"), std::string::npos);
  EXPECT_EQ(activity({tasks("FINISHED", 120), tasks("RUNNING", 0)}).level(), A::IDLE);
  // Work submitted and waiting for a node (a cluster at zero) is use: it should wake.
  auto waiting = activity({tasks("PENDING_NODE_ASSIGNMENT", 2), tasks("RUNNING", 0)});
  EXPECT_EQ(waiting.level(), A::ACTIVE);
  EXPECT_NE(waiting.evidence().find("tasks waiting"), std::string::npos) << waiting.evidence();
  EXPECT_EQ(activity({tasks("PENDING_NODE_ASSIGNMENT", 0)}).level(), A::IDLE);
  // A task that never ends (a control loop) can be ignored by name.
  EXPECT_EQ(activity({tasks("RUNNING", 1, "ServeController.run_control_loop")}, small_cluster(),
                     R"({"ignored_tasks": ["ServeController.run_control_loop"]})")
                .level(),
            A::IDLE);
  // Ray's own metrics can be switched off.
  EXPECT_EQ(activity({tasks("RUNNING", 3)}, small_cluster(), R"({"ray_metrics": false})").level(),
            A::UNKNOWN);
}

TEST(RayActivity, ServeRequestsInFlight) {
  auto ongoing = [](double v, int64_t at) {
    return sample("ray_serve_num_ongoing_http_requests", {{"pod", "rc-head-x"}}, v, at);
  };
  EXPECT_EQ(activity({ongoing(0, kT0), ongoing(0, kT0 + 10'000)}).level(), A::IDLE);
  auto a = activity({ongoing(0, kT0), ongoing(2, kT0 + 10'000)});
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), kT0 + 10'000);
  EXPECT_EQ(activity({sample("ray_serve_replica_processing_queries",
                             {{"deployment", "llm"}, {"replica", "r1"}}, 1, kT0)})
                .level(),
            A::ACTIVE);
}

TEST(RayActivity, ServeCountersCompareScrapes) {
  auto served = [](double v, int64_t at) {
    return sample("ray_serve_num_http_requests_total", {{"route", "/"}, {"method", "GET"}}, v, at);
  };
  // One scrape alone says nothing.
  EXPECT_EQ(activity({served(40, kT0)}).level(), A::UNKNOWN);
  EXPECT_EQ(activity({served(40, kT0), served(40, kT0 + 30'000)}).level(), A::IDLE);
  // Out of order on the wire: compared by time.
  auto a = activity({served(45, kT0 + 30'000), served(40, kT0)});
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), kT0 + 30'000);
  // A restarted counter above zero counted requests since the restart.
  EXPECT_EQ(activity({served(40, kT0), served(3, kT0 + 30'000)}).level(), A::ACTIVE);
}

TEST(RayActivity, RayJobsToo) {
  auto a = activity({gpu_util(70, kT0)}, small_job());
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(activity({gpu_util(1, kT0)}, load("kuberay/ray-job.sample.yaml", "RayJob")).level(),
            A::IDLE);
}

TEST(RayActivity, LatestEvidenceWinsAcrossSources) {
  auto a = activity({gpu_util(90, kT0),
                     sample("ray_tasks", {{"State", "RUNNING"}, {"Name", "f"}}, 1, kT0 + 5'000),
                     gpu_util(1, kT0 + 9'000)});
  EXPECT_EQ(a.level(), A::ACTIVE);
  EXPECT_EQ(last_active_ms(a), kT0 + 5'000);
  EXPECT_NE(a.evidence().find("ray_tasks"), std::string::npos);
}

}  // namespace
