// Lifecycle from status.phase, and the admission gate that keeps a Pod pending.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace pod_test;

v1::WorkloadLifecycle lifecycle(const Json& pod) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  return host.lifecycle(pod.dump());
}

Json in_phase(Json pod, const char* phase) {
  pod["status"]["phase"] = phase;
  return pod;
}

TEST(PodLifecycle, FromThePhase) {
  EXPECT_EQ(lifecycle(running_pod()).state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(lifecycle(in_phase(running_pod(), "Succeeded")).state(),
            v1::WorkloadLifecycle::SUCCEEDED);
  Json failed = in_phase(running_pod(), "Failed");
  failed["status"]["reason"] = "Evicted";
  auto f = lifecycle(failed);
  EXPECT_EQ(f.state(), v1::WorkloadLifecycle::FAILED);
  EXPECT_EQ(f.reason(), "Failed: Evicted");
  // Bound but its containers not started yet.
  Json pending = in_phase(running_pod(), "Pending");
  EXPECT_EQ(lifecycle(pending).state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(lifecycle(pending).reason(), "Pending");
  // The node stopped reporting: its containers may still hold the GPUs.
  EXPECT_EQ(lifecycle(in_phase(running_pod(), "Unknown")).state(), v1::WorkloadLifecycle::RUNNING);
  Json fresh = running_pod();
  fresh.erase("status");
  EXPECT_EQ(lifecycle(fresh).state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(lifecycle(fresh).reason(), "no status yet");
}

TEST(PodLifecycle, AGatedPodIsPendingSchedulingGated) {
  auto l = lifecycle(gated_pod());
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(l.reason(), "SchedulingGated");
  // Only another controller's gate left: pending for the scheduler's own reason.
  Json other = gated_pod();
  other["spec"]["schedulingGates"] = Json::parse(R"([{"name":"example.com/quota-check"}])");
  other["status"]["conditions"][0]["reason"] = "Unschedulable";
  EXPECT_EQ(lifecycle(other).reason(), "Pending: Unschedulable");
}

TEST(PodLifecycle, MalformedStatusOrGatesAreInvalidInputNamingThePointer) {
  auto error_of = [](const Json& pod) { return invalid_input([&] { lifecycle(pod); }); };
  Json pod = running_pod();
  pod["status"]["phase"] = 3;
  EXPECT_EQ(error_of(pod), "/status/phase: want a string, got 3");
  pod["status"]["phase"] = "Sleeping";
  EXPECT_EQ(error_of(pod), "/status/phase: unknown phase \"Sleeping\"");
  pod = gated_pod();
  pod["spec"]["schedulingGates"] = "kueue.x-k8s.io/admission";
  EXPECT_EQ(error_of(pod), "/spec/schedulingGates: not a list");
  pod["spec"]["schedulingGates"] = Json::parse(R"([{"name":"a"},{"gate":"b"}])");
  EXPECT_EQ(error_of(pod),
            "/spec/schedulingGates/1: want {\"name\": string}, got {\"gate\":\"b\"}");
}

}  // namespace
