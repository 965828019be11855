// Activity from Knative request counters, vLLM queues and GPU utilization of the service's pods.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using gpuaas::plugin::testing::FakeHost;
using gpuaas::plugin::testing::sample;
using gpuaas::v1::MetricBatch;
using gpuaas::v1::WorkloadActivity;
using namespace kserve_test;

// The service "llm" in namespace "ns"; its pods as KServe names them.
const std::string kService =
    isvc({{"predictor", model_predictor(Json::object())}}, nullptr, "llm").dump();
const char* kKnativePod = "llm-predictor-00001-deployment-6b455479cb-75p6w";
const char* kRawPod = "llm-predictor-7d9f8c6b5d-x2x4z";

MetricBatch batch(std::vector<gpuaas::v1::MetricSample> samples) {
  MetricBatch b;
  for (auto& s : samples) *b.add_samples() = std::move(s);
  return b;
}

gpuaas::v1::MetricSample requests(const std::string& pod, double value, int64_t at) {
  return sample("revision_request_count",
                {{"configuration_name", "llm-predictor"},
                 {"namespace_name", "ns"},
                 {"pod_name", pod},
                 {"response_code", "200"},
                 {"service_name", "llm-predictor"}},
                value, at);
}

int64_t last_active_ms(const WorkloadActivity& a) {
  return a.last_active().seconds() * 1000 + a.last_active().nanos() / 1'000'000;
}

TEST(kserve_plugin_activity, NoSamplesIsUnknown) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.activity(kService, batch({})).level(), WorkloadActivity::UNKNOWN);
}

TEST(kserve_plugin_activity, OtherWorkloadsSamplesAreIgnored) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(
      kService,
      batch({
          // Another service whose name starts like ours.
          sample(
              "DCGM_FI_DEV_GPU_UTIL",
              {{"gpu", "0"}, {"namespace", "ns"}, {"pod", "llm-predictor-x-predictor-abc12-def34"}},
              90, 1000),
          // Our pod name in another namespace.
          sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"namespace", "other"}, {"pod", kRawPod}},
                 90, 1000),
          // A metric that says nothing about use.
          sample("DCGM_FI_DEV_FB_USED", {{"gpu", "0"}, {"namespace", "ns"}, {"pod", kRawPod}},
                 40000, 1000),
          // A lone counter sample cannot show a change.
          requests(kKnativePod, 10, 1000),
      }));
  EXPECT_EQ(a.level(), WorkloadActivity::UNKNOWN) << a.evidence();
}

TEST(kserve_plugin_activity, RisingRequestCounterIsActive) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(kService, batch({requests(kKnativePod, 12, 2'000'000),
                                          requests(kKnativePod, 10, 1'000'000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
  EXPECT_EQ(last_active_ms(a), 2'000'000);
  EXPECT_NE(a.evidence().find("revision_request_count rose from 10 to 12"), std::string::npos)
      << a.evidence();
}

TEST(kserve_plugin_activity, FlatRequestCounterIsIdle) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(kService, batch({requests(kKnativePod, 10, 1'000'000),
                                          requests(kKnativePod, 10, 2'000'000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::IDLE) << a.evidence();
}

TEST(kserve_plugin_activity, CountersAreComparedPerSeries) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const char* other_pod = "llm-predictor-00001-deployment-6b455479cb-9zz9z";
  // Two pods, each flat: a sum across them would seem to rise.
  auto a = host.activity(kService,
                         batch({requests(kKnativePod, 10, 1000), requests(other_pod, 20, 2000),
                                requests(kKnativePod, 10, 3000), requests(other_pod, 20, 4000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::IDLE) << a.evidence();
  // A restarted pod whose counter began again and already counts requests.
  a = host.activity(kService,
                    batch({requests(kKnativePod, 50, 1000), requests(kKnativePod, 3, 5000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
  EXPECT_EQ(last_active_ms(a), 5000);
}

TEST(kserve_plugin_activity, LatestUseWins) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto a = host.activity(
      kService,
      batch({requests(kKnativePod, 1, 1000), requests(kKnativePod, 2, 2000),
             requests(kKnativePod, 2, 3000),
             sample("DCGM_FI_DEV_GPU_UTIL",
                    {{"gpu", "0"}, {"namespace", "ns"}, {"pod", kKnativePod}}, 80, 2500)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
  EXPECT_EQ(last_active_ms(a), 2500);
  EXPECT_NE(a.evidence().find("GPU utilization 80%"), std::string::npos) << a.evidence();
}

TEST(kserve_plugin_activity, VllmQueues) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto vllm = [](const char* name, double v) {
    return sample(name, {{"model_name", "llama"}, {"namespace", "ns"}, {"pod", kRawPod}}, v, 7000);
  };
  auto a = host.activity(kService, batch({vllm("vllm:num_requests_running", 0),
                                          vllm("vllm:num_requests_waiting", 0)}));
  EXPECT_EQ(a.level(), WorkloadActivity::IDLE);
  a = host.activity(kService, batch({vllm("vllm:num_requests_running", 0),
                                     vllm("vllm:num_requests_waiting", 3)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
  EXPECT_EQ(last_active_ms(a), 7000);
  a = host.activity(kService, batch({vllm("vllm:num_requests_running", 1)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
}

TEST(kserve_plugin_activity, GpuUtilizationAgainstTheThreshold) {
  auto util = [](double v) {
    return sample("DCGM_FI_DEV_GPU_UTIL",
                  {{"gpu", "0"},
                   {"namespace", "gpu-operator"},
                   {"pod", "nvidia-dcgm-exporter-abcde"},
                   {"exported_namespace", "ns"},
                   {"exported_pod", kRawPod}},
                  v, 9000);
  };
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.activity(kService, batch({util(3)})).level(), WorkloadActivity::IDLE);
  EXPECT_EQ(host.activity(kService, batch({util(5)})).level(), WorkloadActivity::IDLE);
  EXPECT_EQ(host.activity(kService, batch({util(6)})).level(), WorkloadActivity::ACTIVE);
  FakeHost strict(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 50})");
  EXPECT_EQ(strict.activity(kService, batch({util(40)})).level(), WorkloadActivity::IDLE);
  EXPECT_EQ(strict.activity(kService, batch({util(60)})).level(), WorkloadActivity::ACTIVE);
}

TEST(kserve_plugin_activity, SamplesNamingTheServiceItself) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Knative's labels without a pod, KServe before 0.9 ("-default").
  auto a = host.activity(
      kService,
      batch({sample("revision_request_count",
                    {{"service_name", "llm-predictor-default"}, {"namespace_name", "ns"}}, 1, 1000),
             sample("revision_request_count",
                    {{"service_name", "llm-predictor-default"}, {"namespace_name", "ns"}}, 4,
                    2000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
  // The pod label serving.kserve.io/inferenceservice as Prometheus relabels it, and `isvc`.
  a = host.activity(
      kService, batch({sample("vllm:num_requests_running",
                              {{"serving_kserve_io_inferenceservice", "llm"}, {"namespace", "ns"}},
                              2, 3000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::ACTIVE);
  a = host.activity(kService,
                    batch({sample("vllm:num_requests_running", {{"isvc", "llm"}}, 0, 3000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::IDLE);
  // The same name in another namespace is another service.
  a = host.activity(kService, batch({sample("vllm:num_requests_running",
                                            {{"isvc", "llm"}, {"namespace", "prod"}}, 2, 3000)}));
  EXPECT_EQ(a.level(), WorkloadActivity::UNKNOWN);
}

}  // namespace
