// The example plugin through the SDK's fake host, as an outside author tests a plugin.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/plugin/testing.hpp"  // declares gpuaas_plugin_get_descriptor (abi.h)


namespace {

using gpuaas::plugin::testing::FakeHost;
using nlohmann::json;

TEST(SimpleJob, DemandFromTheSample) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto job = gpuaas::plugin::testing::load_manifest(SAMPLE, "SimpleJob");
  auto d = host.demand(job);
  EXPECT_EQ(d.queue_name(), "team-a");
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).count(), 2);
  for (const auto& r : d.pod_sets(0).per_pod()) {
    if (r.name() == "nvidia.com/gpu") EXPECT_EQ(r.milli(), 2000);  // from the limit
    if (r.name() == "cpu") EXPECT_EQ(r.milli(), 4000);
  }
  EXPECT_EQ(host.lifecycle(job).state(), gpuaas::v1::WorkloadLifecycle::SUSPENDED);
}

TEST(SimpleJob, AdmitThenSuspendRestores) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto job = gpuaas::plugin::testing::load_manifest(SAMPLE, "SimpleJob");
  gpuaas::v1::ActionRequest r;
  (*r.mutable_node_labels())["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
  auto admitted = json::parse(host.apply(job, host.action(GPUAAS_ACTION_ADMIT, job, r)));
  EXPECT_EQ(admitted["spec"]["suspend"], false);
  auto back = json::parse(
      host.apply(admitted.dump(), host.action(GPUAAS_ACTION_SUSPEND, admitted.dump())));
  EXPECT_EQ(back, json::parse(job));
}

TEST(SimpleJob, BadSettingIsRefused) {
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"threshold": "high"})"),
               gpuaas::plugin::testing::CallFailed);
}

}  // namespace
