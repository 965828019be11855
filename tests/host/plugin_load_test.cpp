// Plugins that load: what the host reports about them, find(), and an older plugin whose api
// table is shorter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/plugin/abi.h"
#include "plugin_test_support.hpp"

namespace gpuaas::host {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using testing::metric;
using testing::plugin_case;

TEST(PluginKindTest, ApiVersionJoinsGroupAndVersion) {
  EXPECT_EQ((PluginKind{"ray.io", "v1", "RayCluster"}.api_version()), "ray.io/v1");
  EXPECT_EQ((PluginKind{"", "v1", "Pod"}.api_version()), "v1");
}

TEST(PluginLoadTest, GoodPluginLoadsAndReportsItsDescriptor) {
  telemetry::Registry registry;
  PluginHost host(&registry);
  ASSERT_TRUE(host.load(testing::good_plugin()).is_ok());

  const auto plugins = host.plugins();
  ASSERT_EQ(plugins.size(), 1u);
  const PluginInfo& info = plugins[0];
  EXPECT_EQ(info.name, "example");
  EXPECT_EQ(info.version, "1.2.0");
  EXPECT_EQ(info.status, "alpha");
  EXPECT_EQ(info.event_schema, "gpuaas.v1");
  EXPECT_THAT(info.path, EndsWith("/good/libgood.so"));
  ASSERT_EQ(info.kinds.size(), 1u);
  EXPECT_TRUE(info.kinds[0].same(PluginKind{"example.com", "v1", "Widget"}));
  EXPECT_EQ(info.capabilities, kPluginCapDemand | kPluginCapLifecycle | kPluginCapAdmission |
                                   kPluginCapScaleToZero | kPluginCapActivity);
  EXPECT_EQ(info.abi_major, GPUAAS_PLUGIN_ABI_MAJOR);
  EXPECT_EQ(info.abi_minor, GPUAAS_PLUGIN_ABI_MINOR);
  EXPECT_FALSE(info.disabled);
  EXPECT_EQ(info.calls, 0u);
  EXPECT_TRUE(host.refusals().empty());
  EXPECT_EQ(metric(registry, "gpuaas_plugins_loaded"), 1.0);
  EXPECT_EQ(metric(registry, "gpuaas_plugin_disabled", {{"plugin", "example"}}), 0.0);
}

TEST(PluginLoadTest, FindMatchesApiVersionAndKind) {
  PluginHost host;
  ASSERT_TRUE(host.load(testing::good_plugin()).is_ok());
  WorkloadPlugin* widget = host.find("example.com/v1", "Widget");
  ASSERT_NE(widget, nullptr);
  EXPECT_EQ(widget->name(), "example");
  EXPECT_TRUE(widget->handles("example.com/v1", "Widget"));
  EXPECT_EQ(host.find("example.com/v2", "Widget"), nullptr);
  EXPECT_EQ(host.find("v1", "Widget"), nullptr);
  EXPECT_EQ(host.find("example.com/v1", "Gadget"), nullptr);
  EXPECT_EQ(host.find("example.co/v1", "Widget"), nullptr);
  EXPECT_EQ(host.find("example.com/v1/", "Widget"), nullptr);
}

TEST(PluginLoadTest, OlderPluginWithShorterApiTableLoadsWithoutItsMissingFunctions) {
  PluginHost host;
  const auto old_so = plugin_case("old_plugin") / "libold_plugin.so";
  ASSERT_TRUE(host.load(old_so).is_ok()) << host.load(old_so).message();
  WorkloadPlugin* old = host.find("example.com/v1", "OldWidget");
  ASSERT_NE(old, nullptr);
  EXPECT_TRUE(old->has(kPluginCapDemand | kPluginCapAdmission | kPluginCapScaleToZero));
  EXPECT_FALSE(old->has(kPluginCapActivity));

  // activity() lies beyond its struct_size: never read, never called.
  const auto a = old->activity("{}", v1::MetricBatch());
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(a.status().message(), "plugin old does not declare capability ACTIVITY");
  EXPECT_EQ(old->info().calls, 0u);

  const auto d = old->demand("{}");
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_EQ(d->pod_sets_size(), 1);
}

TEST(PluginLoadTest, KindInfoOfTheCurrentAbiIsRead) {
  PluginHost host;
  ASSERT_TRUE(host.load(testing::good_plugin()).is_ok());
  const PluginKind* k = host.find("example.com/v1", "Widget")->kind_of("example.com/v1", "Widget");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->declared);
  EXPECT_EQ(k->plural, "widgets");
  EXPECT_TRUE(k->namespaced);
  EXPECT_EQ(k->hold, (KindHold{KindHold::Type::kSetTrue, "/spec/suspend"}));
  EXPECT_EQ(k->pod_label, "example.com/widget");
  EXPECT_TRUE(k->queued_only);
  EXPECT_FALSE(k->session);
  EXPECT_EQ(k->binding, KindBinding::kPreferred);
}

TEST(PluginLoadTest, AbiOneOnePluginLoadsWithTheDefaultBinding) {
  PluginHost host;
  const auto so = plugin_case("abi_1_1") / "libabi_1_1.so";
  ASSERT_TRUE(host.load(so).is_ok()) << host.load(so).message();
  const auto info = host.plugins().at(0);
  EXPECT_EQ(info.abi_minor, 1u);
  ASSERT_EQ(info.kinds.size(), 1u);
  const PluginKind& k = info.kinds[0];
  EXPECT_TRUE(k.declared);
  EXPECT_EQ(k.plural, "widgets");
  EXPECT_EQ(k.hold, (KindHold{KindHold::Type::kSetTrue, "/spec/suspend"}));
  // Not a session: required, whatever lies past the entry's struct_size.
  EXPECT_EQ(k.binding, KindBinding::kRequired);
}

TEST(PluginLoadTest, AbiOneZeroPluginLoadsWithTheBuiltInDefaults) {
  PluginHost host;
  const auto so = plugin_case("abi_1_0") / "libabi_1_0.so";
  ASSERT_TRUE(host.load(so).is_ok()) << host.load(so).message();
  const auto info = host.plugins().at(0);
  EXPECT_EQ(info.abi_minor, 0u);
  ASSERT_EQ(info.kinds.size(), 1u);
  const PluginKind& nb = info.kinds[0];
  EXPECT_FALSE(nb.declared);
  EXPECT_EQ(nb.plural, "notebooks");
  EXPECT_EQ(nb.hold, (KindHold{KindHold::Type::kAnnotation, "kubeflow-resource-stopped",
                               "1970-01-01T00:00:00Z", true}));
  EXPECT_TRUE(nb.session);
  EXPECT_EQ(nb.pod_label, "");
  EXPECT_EQ(nb.binding, KindBinding::kPreferred);
  // A kind gpuaas had nothing built in for: the Kubernetes plural convention, not held.
  ASSERT_TRUE(host.load(plugin_case("old_plugin") / "libold_plugin.so").is_ok());
  const PluginKind* old =
      host.find("example.com/v1", "OldWidget")->kind_of("example.com/v1", "OldWidget");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->plural, "oldwidgets");
  EXPECT_EQ(old->hold.type, KindHold::Type::kNone);
  EXPECT_FALSE(old->queued_only);
  EXPECT_EQ(old->binding, KindBinding::kRequired);
}

TEST(PluginLoadTest, PluginsAreListedByName) {
  PluginHost host;
  ASSERT_TRUE(host.load(plugin_case("old_plugin") / "libold_plugin.so").is_ok());
  ASSERT_TRUE(host.load(testing::good_plugin()).is_ok());
  std::vector<std::string> names;
  for (const auto& p : host.plugins()) names.push_back(p.name);
  EXPECT_THAT(names, ElementsAre("example", "old"));
}

TEST(PluginLoadTest, HostsAreIndependentAndInstancesDieWithTheirHost) {
  for (int i = 0; i < 3; ++i) {
    PluginHost host;
    ASSERT_TRUE(host.load(testing::good_plugin()).is_ok());
    ASSERT_TRUE(host.find("example.com/v1", "Widget")->demand("{}").is_ok());
  }
}

}  // namespace
}  // namespace gpuaas::host
