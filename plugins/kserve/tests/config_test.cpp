// Configuration: defaults, known keys, and clear refusals.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;

std::string refused(const std::string& config) {
  try {
    FakeHost host(gpuaas_plugin_get_descriptor, config);
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    return e.what();
  }
  ADD_FAILURE() << "config accepted: " << config;
  return {};
}

TEST(kserve_plugin_config, DefaultsAndKnownKeys) {
  EXPECT_NO_THROW(FakeHost(gpuaas_plugin_get_descriptor, ""));
  EXPECT_NO_THROW(FakeHost(gpuaas_plugin_get_descriptor, "{}"));
  EXPECT_NO_THROW(
      FakeHost(gpuaas_plugin_get_descriptor,
               R"({"gpu_util_threshold": 12.5, "default_deployment_mode": "Standard"})"));
  EXPECT_NO_THROW(
      FakeHost(gpuaas_plugin_get_descriptor, R"({"default_deployment_mode": "RawDeployment"})"));
  EXPECT_NO_THROW(
      FakeHost(gpuaas_plugin_get_descriptor, R"({"default_deployment_mode": "Serverless"})"));
}

TEST(kserve_plugin_config, RefusesUnknownKeysAndWrongTypes) {
  EXPECT_NE(refused(R"({"gpu_threshold": 5})").find("unknown setting \"gpu_threshold\""),
            std::string::npos);
  EXPECT_NE(refused(R"({"gpu_util_threshold": "5"})").find("gpu_util_threshold"),
            std::string::npos);
  EXPECT_NE(refused(R"({"gpu_util_threshold": 101})").find("gpu_util_threshold"),
            std::string::npos);
  EXPECT_NE(refused(R"({"default_deployment_mode": 1})").find("default_deployment_mode"),
            std::string::npos);
  EXPECT_NE(refused(R"({"default_deployment_mode": "Raw"})").find("unknown deployment mode"),
            std::string::npos);
  refused("[1]");
  refused("{oops");
}

}  // namespace
