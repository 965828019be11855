// Kueue's published sample Job (shared/manifests/kueue/sample-job.yaml): demand worked out by
// hand from the YAML, lifecycle, the admit/suspend round trip, and the descriptor.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace batch_job_test;
using gpuaas::plugin::per_pod_milli;

constexpr int64_t kMi = 1024LL * 1024;

TEST(BatchJobSamples, KueueSampleJobThreePodsOfOneCpu) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(sample_job().dump());
  EXPECT_EQ(d.queue_name(), "user-queue");
  EXPECT_EQ(d.priority_class(), "");
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& s = d.pod_sets(0);
  EXPECT_EQ(s.name(), "main");
  EXPECT_EQ(s.count(), 3);  // parallelism 3, completions 3
  EXPECT_EQ(s.min_count(), 0);
  EXPECT_EQ(per_pod_milli(s, "cpu"), 1000);
  EXPECT_EQ(per_pod_milli(s, "memory"), 200 * kMi * 1000);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 0);
  EXPECT_EQ(s.per_pod_size(), 2);
  EXPECT_TRUE(s.node_selector().empty());
}

TEST(BatchJobSamples, KueueSampleJobLifecycle) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto l = host.lifecycle(sample_job().dump());
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(l.reason(), "no status yet");
  l = host.lifecycle(queued_sample().dump());
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(l.reason(), "spec.suspend is true");
}

// Admit -> apply -> suspend -> apply. The Job was unsuspended, so the API server would refuse a
// template change in the SUSPEND patch: it only sets the flag, and the template keeps the
// flavor. Once suspended and never started, a second SUSPEND gives the queued object back.
TEST(BatchJobSamples, AdmitSuspendRoundTrip) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const Json original = queued_sample();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, original.dump(), flavor_request());
  ASSERT_EQ(admit.actions_size(), 1);
  EXPECT_EQ(admit.actions(0).reason(), "admitted by ClusterQueue team-a");
  EXPECT_EQ(admit.actions(0).target().name(), "sample-job-7k2qz");
  Json body = Json::parse(admit.actions(0).body_json());
  EXPECT_EQ(body["metadata"]["resourceVersion"], "41");
  EXPECT_EQ(body["metadata"]["annotations"][gpuaas::plugin::kFlavorAnnotation], "a100");
  EXPECT_EQ(body["spec"]["suspend"], false);
  EXPECT_FALSE(body["spec"].contains("parallelism"));

  Json admitted = Json::parse(host.apply(original.dump(), admit));
  const Json& spec = admitted["spec"]["template"]["spec"];
  EXPECT_EQ(spec["nodeSelector"], (Json{{"gpu.pool", "a100"}}));
  ASSERT_EQ(spec["tolerations"].size(), 1u);
  EXPECT_EQ(spec["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(spec["containers"], original["spec"]["template"]["spec"]["containers"]);
  EXPECT_EQ(host.lifecycle(admitted.dump()).state(), v1::WorkloadLifecycle::PENDING);
  admitted["metadata"]["resourceVersion"] = "42";
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, admitted.dump(), flavor_request()).actions_size(), 0);

  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, admitted.dump());
  ASSERT_EQ(suspend.actions_size(), 1);
  EXPECT_EQ(Json::parse(suspend.actions(0).body_json()),
            Json::parse(R"({"metadata":{"resourceVersion":"42"},"spec":{"suspend":true}})"));
  Json suspended = Json::parse(host.apply(admitted.dump(), suspend));
  EXPECT_EQ(host.lifecycle(suspended.dump()).state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(suspended["spec"]["template"], admitted["spec"]["template"]);

  Json back = Json::parse(
      host.apply(suspended.dump(), host.action(GPUAAS_ACTION_SUSPEND, suspended.dump())));
  back["metadata"]["resourceVersion"] = "41";
  EXPECT_EQ(back, original);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, original.dump()).actions_size(), 0);
}

TEST(BatchJobDescriptor, KindsAndCapabilities) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.summary(),
            "batch-job 0.1.0 alpha abi 1.3 gpuaas.v1 | batch/v1 Job | demand lifecycle admission "
            "activity");
  EXPECT_EQ(rc_of([&] { host.action(GPUAAS_ACTION_SCALE_TO_ZERO, sample_job().dump()); }),
            GPUAAS_RC_NOT_SUPPORTED);
}

}  // namespace
