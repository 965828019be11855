// Lifecycle from the stop annotation, KServe's model status and the Ready condition.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using gpuaas::plugin::testing::FakeHost;
using gpuaas::v1::WorkloadLifecycle;
using namespace kserve_test;

Json with_ready(Json o, const char* status, const char* reason = nullptr,
                const char* message = nullptr) {
  Json c = {{"type", "Ready"}, {"status", status}};
  if (reason != nullptr) c["reason"] = reason;
  if (message != nullptr) c["message"] = message;
  o["status"]["conditions"] = {{{"type", "PredictorReady"}, {"status", status}}, c};
  return o;
}

Json service() { return isvc({{"predictor", model_predictor(Json::object())}}); }

TEST(kserve_plugin_lifecycle, SamplesWithoutStatusArePending) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const char* file :
       {"autoscale.yaml", "autoscale_gpu.yaml", "hf_isvc.yaml", "kserve-isvc.yaml"}) {
    auto l = host.lifecycle(sample(file).dump());
    EXPECT_EQ(l.state(), WorkloadLifecycle::PENDING) << file;
    EXPECT_EQ(l.reason(), "no Ready condition yet") << file;
  }
}

TEST(kserve_plugin_lifecycle, ReadyIsRunning) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(with_ready(sample("hf_isvc.yaml"), "True").dump());
  EXPECT_EQ(l.state(), WorkloadLifecycle::RUNNING);
  EXPECT_EQ(l.reason(), "Ready");
}

TEST(kserve_plugin_lifecycle, StopAnnotationSuspends) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = with_ready(service(), "True");
  o["metadata"]["annotations"]["serving.kserve.io/stop"] = "true";
  EXPECT_EQ(host.lifecycle(o.dump()).state(), WorkloadLifecycle::SUSPENDED);
  o["metadata"]["annotations"]["serving.kserve.io/stop"] = "True";  // KServe ignores case
  EXPECT_EQ(host.lifecycle(o.dump()).state(), WorkloadLifecycle::SUSPENDED);
  o["metadata"]["annotations"]["serving.kserve.io/stop"] = "false";
  EXPECT_EQ(host.lifecycle(o.dump()).state(), WorkloadLifecycle::RUNNING);
  // Stopped wins over a failure: the user or gpuaas stopped it.
  Json failed = with_ready(service(), "False", "RevisionFailed", "exit code 1");
  failed["metadata"]["annotations"]["serving.kserve.io/stop"] = "true";
  EXPECT_EQ(host.lifecycle(failed.dump()).state(), WorkloadLifecycle::SUSPENDED);
}

TEST(kserve_plugin_lifecycle, ModelLoadFailureFails) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = with_ready(service(), "False", "ModelLoadFailed");
  o["status"]["modelStatus"] = {
      {"transitionStatus", "BlockedByFailedLoad"},
      {"lastFailureInfo", {{"reason", "ModelLoadFailed"}, {"message", "no such bucket"}}}};
  auto l = host.lifecycle(o.dump());
  EXPECT_EQ(l.state(), WorkloadLifecycle::FAILED);
  EXPECT_EQ(l.reason(), "BlockedByFailedLoad: ModelLoadFailed: no such bucket");
  o["status"]["modelStatus"] = {{"transitionStatus", "InvalidSpec"}};
  EXPECT_EQ(host.lifecycle(o.dump()).state(), WorkloadLifecycle::FAILED);
  EXPECT_EQ(host.lifecycle(o.dump()).reason(), "InvalidSpec");
}

TEST(kserve_plugin_lifecycle, FailedRevisionFailsUnlessUnschedulable) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(with_ready(service(), "False", "RevisionFailed",
                                     "Revision \"svc-predictor-00001\" failed "
                                     "with message: Back-off pulling image")
                              .dump());
  EXPECT_EQ(l.state(), WorkloadLifecycle::FAILED);
  EXPECT_EQ(l.reason().find("RevisionFailed: "), 0u);
  // Waiting for a GPU node is not a failure: gpuaas itself may make room.
  l = host.lifecycle(with_ready(service(), "False", "RevisionFailed",
                                "Unschedulable: 0/3 nodes are available: Insufficient "
                                "nvidia.com/gpu")
                         .dump());
  EXPECT_EQ(l.state(), WorkloadLifecycle::PENDING);
  l = host.lifecycle(with_ready(service(), "False", "ProgressDeadlineExceeded").dump());
  EXPECT_EQ(l.state(), WorkloadLifecycle::PENDING);
  EXPECT_EQ(l.reason(), "Ready False: ProgressDeadlineExceeded");
  l = host.lifecycle(with_ready(service(), "Unknown").dump());
  EXPECT_EQ(l.state(), WorkloadLifecycle::PENDING);
  // Model status in progress while Ready: still running.
  Json o = with_ready(service(), "True");
  o["status"]["modelStatus"] = {{"transitionStatus", "InProgress"}};
  EXPECT_EQ(host.lifecycle(o.dump()).state(), WorkloadLifecycle::RUNNING);
}

}  // namespace
