// Lifecycle of RayClusters (status.state, KubeRay's conditions, spec.suspend) and RayJobs
// (jobDeploymentStatus and jobStatus), for the published samples and for each status KubeRay sets.
#include "support.hpp"

namespace {

using namespace ray_test;
using L = v1::WorkloadLifecycle;

L lifecycle(const Json& o) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  return host.lifecycle(o.dump());
}

Json condition(const char* type, const char* status, const char* message = "") {
  return {{"type", type}, {"status", status}, {"reason", "R"}, {"message", message}};
}

TEST(RayLifecycle, PublishedSamplesArePendingBeforeKubeRaySpeaks) {
  for (const auto& s : kClusters) {
    auto l = lifecycle(load(s.file, s.kind));
    EXPECT_EQ(l.state(), L::PENDING) << s.file;
    EXPECT_EQ(l.reason(), "waiting for the Ray pods") << s.file;
  }
  for (const auto& s : kJobs) {
    auto l = lifecycle(load(s.file, s.kind));
    EXPECT_EQ(l.state(), L::PENDING) << s.file;
    EXPECT_EQ(l.reason(), "not started") << s.file;
  }
}

TEST(RayLifecycle, SuspendedSamples) {
  for (const auto& s : kClusters) {
    Json o = load(s.file, s.kind);
    o["spec"]["suspend"] = true;
    EXPECT_EQ(lifecycle(o).state(), L::SUSPENDED) << s.file;
  }
  for (const auto& s : kJobs) {
    Json o = load(s.file, s.kind);
    o["spec"]["suspend"] = true;
    EXPECT_EQ(lifecycle(o).state(), L::SUSPENDED) << s.file;
  }
}

TEST(RayClusterLifecycle, StatusStateAndConditions) {
  Json c = load("kuberay/ray-cluster.complete.yaml", "RayCluster");
  c["status"] = {{"state", "ready"}};
  EXPECT_EQ(lifecycle(c).state(), L::RUNNING);
  c["status"] = {{"state", "failed"}, {"reason", "head pod failed"}};
  EXPECT_EQ(lifecycle(c).state(), L::FAILED);
  EXPECT_EQ(lifecycle(c).reason(), "head pod failed");
  c["status"] = {{"state", "suspended"}};
  EXPECT_EQ(lifecycle(c).state(), L::SUSPENDED);

  // KubeRay >= 1.2: conditions.
  c["status"] = {{"conditions",
                  {condition("RayClusterProvisioned", "True"), condition("HeadPodReady", "True")}}};
  EXPECT_EQ(lifecycle(c).state(), L::RUNNING);
  c["status"]["conditions"][1] = condition("HeadPodReady", "False", "head pod restarting");
  EXPECT_EQ(lifecycle(c).state(), L::PENDING);
  EXPECT_EQ(lifecycle(c).reason(), "HeadPodReady: head pod restarting");
  c["status"] = {{"conditions",
                  {condition("RayClusterProvisioned", "False"),
                   condition("ReplicaFailure", "True", "quota exceeded")}}};
  EXPECT_EQ(lifecycle(c).state(), L::PENDING);
  EXPECT_EQ(lifecycle(c).reason(), "ReplicaFailure: quota exceeded");
  c["status"] = {{"conditions", {condition("RayClusterSuspended", "True")}}};
  EXPECT_EQ(lifecycle(c).state(), L::SUSPENDED);

  // spec.suspend wins over a stale ready state, and says when pods are still going.
  c["spec"]["suspend"] = true;
  c["status"] = {{"state", "ready"}, {"conditions", {condition("RayClusterSuspending", "True")}}};
  EXPECT_EQ(lifecycle(c).state(), L::SUSPENDED);
  EXPECT_EQ(lifecycle(c).reason(), "suspending: deleting its pods");
}

TEST(RayClusterLifecycle, WrongTypesAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json c = small_cluster();
  c["status"] = {{"state", 3}};
  EXPECT_THROW(host.lifecycle(c.dump()), CallFailed);
  c = small_cluster();
  c["spec"]["suspend"] = "true";
  try {
    host.lifecycle(c.dump());
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/spec/suspend: want true or false, got \"true\"");
  }
}

TEST(RayJobLifecycle, DeploymentAndJobStatus) {
  Json j = load("kuberay/ray-job.sample.yaml", "RayJob");
  auto at = [&](const char* deploy, const char* job) {
    j["status"] = {{"jobDeploymentStatus", deploy}, {"jobStatus", job}};
    return lifecycle(j);
  };
  EXPECT_EQ(at("Initializing", "").state(), L::PENDING);
  EXPECT_EQ(at("Waiting", "").state(), L::PENDING);
  EXPECT_EQ(at("Running", "PENDING").state(), L::RUNNING);
  EXPECT_EQ(at("Running", "RUNNING").state(), L::RUNNING);
  EXPECT_EQ(at("Running", "RUNNING").reason(), "Ray job RUNNING");
  EXPECT_EQ(at("Complete", "SUCCEEDED").state(), L::SUCCEEDED);
  EXPECT_EQ(at("Complete", "FAILED").state(), L::FAILED);
  EXPECT_EQ(at("Complete", "STOPPED").state(), L::FAILED);
  EXPECT_EQ(at("Complete", "STOPPED").reason(), "Ray job STOPPED");
  EXPECT_EQ(at("Failed", "").state(), L::FAILED);
  EXPECT_EQ(at("Suspending", "").state(), L::SUSPENDED);
  EXPECT_EQ(at("Suspended", "").state(), L::SUSPENDED);
  EXPECT_EQ(at("Retrying", "FAILED").state(), L::PENDING);  // backoffLimit: not final yet
  EXPECT_EQ(at("SomethingNew", "").state(), L::PENDING);
  EXPECT_EQ(at("SomethingNew", "").reason(), "unknown jobDeploymentStatus SomethingNew");
  // Before KubeRay writes a deployment status.
  EXPECT_EQ(at("", "RUNNING").state(), L::RUNNING);
  EXPECT_EQ(at("", "SUCCEEDED").state(), L::SUCCEEDED);
  EXPECT_EQ(at("", "").state(), L::PENDING);

  j["status"] = {{"jobDeploymentStatus", "Failed"},
                 {"reason", "DeadlineExceeded"},
                 {"message", "activeDeadlineSeconds 600 reached"}};
  EXPECT_EQ(lifecycle(j).reason(), "DeadlineExceeded: activeDeadlineSeconds 600 reached");

  // A finished job stays finished even if someone suspends it afterwards; a live one suspends.
  j["spec"]["suspend"] = true;
  EXPECT_EQ(lifecycle(j).state(), L::FAILED);
  j["status"] = {{"jobDeploymentStatus", "Running"}, {"jobStatus", "RUNNING"}};
  EXPECT_EQ(lifecycle(j).state(), L::SUSPENDED);
}

}  // namespace

namespace {

using namespace ray_test;

// Every entry point answers a malformed object with InvalidInput, never a crash.
TEST(RayMalformed, EveryCallRejectsBrokenJson) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const std::string broken = R"({"apiVersion": )";
  auto rc_of = [](auto&& call) {
    try {
      call();
    } catch (const CallFailed& e) {
      return e.rc();
    }
    return GPUAAS_RC_OK;
  };
  EXPECT_EQ(rc_of([&] { host.demand(broken); }), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(rc_of([&] { host.lifecycle(broken); }), GPUAAS_RC_INVALID_INPUT);
  for (auto kind : {GPUAAS_ACTION_ADMIT, GPUAAS_ACTION_SUSPEND, GPUAAS_ACTION_SCALE_TO_ZERO,
                    GPUAAS_ACTION_SCALE_BACK}) {
    EXPECT_EQ(rc_of([&] { host.action(kind, broken); }), GPUAAS_RC_INVALID_INPUT);
  }
  EXPECT_EQ(rc_of([&] { host.activity(broken, v1::MetricBatch()); }), GPUAAS_RC_INVALID_INPUT);
  // A well-formed object of another kind, or without a name.
  EXPECT_EQ(rc_of([&] {
              host.lifecycle(R"({"apiVersion":"ray.io/v1","kind":"RayService",
                                           "metadata":{"name":"s"}})");
            }),
            GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(rc_of([&] { host.demand(R"({"apiVersion":"ray.io/v1","kind":"RayCluster"})"); }),
            GPUAAS_RC_INVALID_INPUT);
}

}  // namespace
