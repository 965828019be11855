// Lifecycle from the stop annotation and the status the notebook controller writes.
#include "support.hpp"

namespace workbench_test {
namespace {

using L = v1::WorkloadLifecycle;

Json with_status(const Json& status) {
  Json nb = with_resources({{"limits", {{"nvidia.com/gpu", "1"}}}});
  nb["status"] = status;
  return nb;
}

TEST(WorkbenchLifecycle, ReadyReplicasMeansRunning) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(
      with_status({{"readyReplicas", 1}, {"containerState", {{"running", {{"startedAt", "x"}}}}}})
          .dump());
  EXPECT_EQ(l.state(), L::RUNNING);
  EXPECT_EQ(l.reason(), "ready");
}

TEST(WorkbenchLifecycle, RunningContainerNotYetReady) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(
      with_status({{"readyReplicas", 0},
                   {"containerState", {{"running", {{"startedAt", "2025-11-29T18:00:00Z"}}}}}})
          .dump());
  EXPECT_EQ(l.state(), L::RUNNING);
  EXPECT_EQ(l.reason(), "container running");
}

TEST(WorkbenchLifecycle, StopAnnotationMeansSuspendedEvenWhileStopping) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = with_status({{"readyReplicas", 1}});
  nb["metadata"]["annotations"] = {{"kubeflow-resource-stopped", "2025-11-29T18:00:00Z"}};
  auto l = host.lifecycle(nb.dump());
  EXPECT_EQ(l.state(), L::SUSPENDED);
  EXPECT_EQ(l.reason(), "stopping: kubeflow-resource-stopped is set");
  nb["status"]["readyReplicas"] = 0;
  l = host.lifecycle(nb.dump());
  EXPECT_EQ(l.state(), L::SUSPENDED);
  EXPECT_EQ(l.reason(), "stopped: kubeflow-resource-stopped is set");
}

// Back-off is PENDING with its reason, never FAILED: see lifecycle.cpp.
TEST(WorkbenchLifecycle, BackOffIsPendingWithTheReason) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(
      with_status({{"readyReplicas", 0},
                   {"containerState",
                    {{"waiting",
                      {{"reason", "CrashLoopBackOff"},
                       {"message", "back-off 5m0s restarting failed container=nb"}}}}}})
          .dump());
  EXPECT_EQ(l.state(), L::PENDING);
  EXPECT_EQ(l.reason(), "CrashLoopBackOff: back-off 5m0s restarting failed container=nb");
  l = host.lifecycle(
      with_status({{"containerState", {{"waiting", {{"reason", "ImagePullBackOff"}}}}}}).dump());
  EXPECT_EQ(l.state(), L::PENDING);
  EXPECT_EQ(l.reason(), "ImagePullBackOff");
  l = host.lifecycle(
      with_status({{"containerState", {{"terminated", {{"reason", "OOMKilled"}}}}}}).dump());
  EXPECT_EQ(l.state(), L::PENDING);
  EXPECT_EQ(l.reason(), "container terminated (OOMKilled), restarting");
}

TEST(WorkbenchLifecycle, UnschedulableConditionGivesTheReason) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(
      with_status({{"conditions",
                    {{{"type", "PodScheduled"},
                      {"status", "False"},
                      {"reason", "Unschedulable"},
                      {"message", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}}}})
          .dump());
  EXPECT_EQ(l.state(), L::PENDING);
  EXPECT_EQ(l.reason(), "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.");
}

TEST(WorkbenchLifecycle, NotebooksNeverSucceed) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Even a completed-looking container is a notebook about to restart.
  auto l =
      host.lifecycle(with_status({{"containerState",
                                   {{"terminated", {{"reason", "Completed"}, {"exitCode", 0}}}}}})
                         .dump());
  EXPECT_EQ(l.state(), L::PENDING);
  EXPECT_EQ(host.lifecycle(with_status(Json::object()).dump()).state(), L::PENDING);
}

TEST(WorkbenchLifecycle, ReadyReplicasIsAnInt32) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.lifecycle(with_status({{"readyReplicas", 2147483647}}).dump()).state(),
            L::RUNNING);
  for (const Json& bad :
       {Json(2147483648LL), Json(18446744073709551615ULL), Json(-1), Json("1"), Json(1.5)}) {
    try {
      host.lifecycle(with_status({{"readyReplicas", bad}}).dump());
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
      EXPECT_EQ(std::string(e.what()).rfind("/status/readyReplicas: ", 0), 0u) << e.what();
    }
  }
}

TEST(WorkbenchLifecycle, WrongStatusTypes) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  try {
    host.lifecycle(with_status({{"containerState", "running"}}).dump());
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/status/containerState: not an object");
  }
  try {
    host.lifecycle(with_status({{"containerState", {{"waiting", {{"reason", 7}}}}}}).dump());
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/status/containerState/waiting/reason: not a string");
  }
  // Conditions with odd member types are only text for people: skipped, not an error.
  EXPECT_EQ(host.lifecycle(with_status({{"conditions", {{{"status", 1}, {"reason", 2}}}}}).dump())
                .state(),
            L::PENDING);
}

}  // namespace
}  // namespace workbench_test
