// Calls through the ABI: results round-trip as protobuf, return codes map to Status, repeated
// internal failures disable an instance and invalid input does not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "gpuaas/host/plugin_host.hpp"
#include "plugin_test_support.hpp"

namespace gpuaas::host {
namespace {

using ::testing::HasSubstr;
using testing::metric;

class PluginCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.max_consecutive_failures = 3;
    options_.config_json["example"] = R"("team-a")";
    host_ = std::make_unique<PluginHost>(&registry_, options_);
    ASSERT_TRUE(host_->load(testing::good_plugin()).is_ok());
    plugin_ = host_->find("example.com/v1", "Widget");
    ASSERT_NE(plugin_, nullptr);
  }

  double errors(const std::string& code) {
    return metric(registry_, "gpuaas_plugin_errors_total", {{"plugin", "example"}, {"code", code}})
        .value_or(-1);
  }

  telemetry::Registry registry_;
  PluginHostOptions options_;
  std::unique_ptr<PluginHost> host_;
  WorkloadPlugin* plugin_ = nullptr;
};

TEST_F(PluginCallTest, DemandRoundTripsAndCreateGotItsConfig) {
  const auto d = plugin_->demand(R"({"kind":"Widget"})");
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  ASSERT_EQ(d->pod_sets_size(), 1);
  EXPECT_EQ(d->pod_sets(0).name(), "workers");
  EXPECT_EQ(d->pod_sets(0).count(), 2);
  ASSERT_EQ(d->pod_sets(0).per_pod_size(), 1);
  EXPECT_EQ(d->pod_sets(0).per_pod(0).name(), "nvidia.com/gpu");
  EXPECT_EQ(d->pod_sets(0).per_pod(0).milli(), 1000);
  EXPECT_EQ(d->queue_name(), R"("team-a")");
  EXPECT_EQ(plugin_->info().calls, 1u);
  EXPECT_EQ(metric(registry_, "gpuaas_plugin_calls_total",
                   {{"plugin", "example"}, {"function", "demand"}}),
            1.0);
}

TEST_F(PluginCallTest, LifecycleActionAndActivityRoundTrip) {
  EXPECT_EQ(plugin_->lifecycle("{}")->state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(plugin_->lifecycle(R"({"status":"done"})")->state(), v1::WorkloadLifecycle::SUCCEEDED);

  v1::ActionRequest request;
  request.set_flavor("a100");
  request.set_reason("quota free");
  const auto admit = plugin_->action(PluginAction::kAdmit, "{}", request);
  ASSERT_TRUE(admit.is_ok()) << admit.status().message();
  ASSERT_EQ(admit->actions_size(), 1);
  EXPECT_EQ(admit->actions(0).operation(), v1::Action::MERGE_PATCH);
  EXPECT_EQ(admit->actions(0).body_json(), R"({"spec":{"suspend":false}})");
  EXPECT_EQ(admit->actions(0).reason(), "quota free flavor=a100 kind=1");
  const auto suspend = plugin_->action(PluginAction::kSuspend, "{}", request);
  EXPECT_EQ(suspend->actions(0).body_json(), R"({"spec":{"suspend":true}})");
  const auto zero = plugin_->action(PluginAction::kScaleToZero, "{}", request);
  EXPECT_THAT(zero->actions(0).reason(), HasSubstr("kind=3"));

  v1::MetricBatch samples;
  EXPECT_EQ(plugin_->activity("{}", samples)->level(), v1::WorkloadActivity::IDLE);
  samples.add_samples()->set_name("DCGM_FI_DEV_GPU_UTIL");
  samples.add_samples()->set_name("DCGM_FI_DEV_GPU_UTIL");
  const auto active = plugin_->activity("{}", samples);
  EXPECT_EQ(active->level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(active->evidence(), "2 samples");
}

TEST_F(PluginCallTest, ReturnCodesMapToStatus) {
  const auto bad = plugin_->demand(R"({"bad":1})");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(bad.status().message(), "plugin example: demand(): no spec.size");
  const auto unsupported = plugin_->demand(R"({"unsupported":1})");
  EXPECT_EQ(unsupported.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unsupported.status().message(), HasSubstr("not handled"));
  const auto boom = plugin_->demand(R"({"boom":1})");
  EXPECT_EQ(boom.status().code(), StatusCode::kInternal);
  EXPECT_EQ(boom.status().message(), "plugin example: demand(): widget exploded");
  const auto garbage = plugin_->demand(R"({"garbage":1})");
  EXPECT_EQ(garbage.status().code(), StatusCode::kInternal);
  EXPECT_THAT(garbage.status().message(),
              HasSubstr("the reply (12 bytes) is not a gpuaas.v1.WorkloadDemand"));

  EXPECT_EQ(errors("invalid_input"), 1.0);
  EXPECT_EQ(errors("not_supported"), 1.0);
  EXPECT_EQ(errors("internal"), 1.0);
  EXPECT_EQ(errors("bad_reply"), 1.0);
  EXPECT_EQ(plugin_->info().errors, 4u);
}

TEST_F(PluginCallTest, InternalFailuresInARowDisableThePlugin) {
  EXPECT_EQ(plugin_->demand("boom").status().code(), StatusCode::kInternal);
  EXPECT_EQ(plugin_->demand("garbage").status().code(), StatusCode::kInternal);
  EXPECT_FALSE(plugin_->disabled());
  EXPECT_EQ(plugin_->demand("boom").status().code(), StatusCode::kInternal);
  EXPECT_TRUE(plugin_->disabled());

  const auto after = plugin_->lifecycle("{}");
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(after.status().message(),
              HasSubstr("plugin example disabled: 3 internal failures in a row, the last: "
                        "plugin example: demand(): widget exploded"));
  const PluginInfo info = plugin_->info();
  EXPECT_TRUE(info.disabled);
  EXPECT_EQ(info.calls, 3u);  // the call after disabling never reached it
  EXPECT_EQ(host_->find("example.com/v1", "Widget"), nullptr);
  EXPECT_TRUE(host_->plugins()[0].disabled);
  EXPECT_EQ(metric(registry_, "gpuaas_plugin_disabled", {{"plugin", "example"}}), 1.0);
}

TEST_F(PluginCallTest, ASuccessResetsTheFailureStreak) {
  for (int round = 0; round < 4; ++round) {
    EXPECT_FALSE(plugin_->demand("boom").is_ok());
    EXPECT_FALSE(plugin_->demand("boom").is_ok());
    EXPECT_TRUE(plugin_->demand("{}").is_ok());
  }
  EXPECT_FALSE(plugin_->disabled());
}

TEST_F(PluginCallTest, InvalidInputNeverDisables) {
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(plugin_->demand("bad").status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(plugin_->demand("unsupported").status().code(), StatusCode::kNotFound);
  }
  EXPECT_FALSE(plugin_->disabled());
  EXPECT_EQ(errors("invalid_input"), 10.0);
  EXPECT_EQ(plugin_->info().errors, 20u);
}

TEST_F(PluginCallTest, UnknownActionIsInvalidAndNotCalled) {
  const auto r = plugin_->action(static_cast<PluginAction>(9), "{}", v1::ActionRequest());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(plugin_->info().calls, 0u);
}

TEST_F(PluginCallTest, CallsFromManyThreadsAreSerialized) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < 200; ++i) ASSERT_TRUE(plugin_->demand("{}").is_ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(plugin_->info().calls, 800u);
}

}  // namespace
}  // namespace gpuaas::host
