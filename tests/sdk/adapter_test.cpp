// The ABI adapter, end to end through the fake host: a plugin defined here, called as gpuaasd
// calls it.
#include <gtest/gtest.h>

#include "gpuaas/plugin/sdk.hpp"
#include "gpuaas/plugin/testing.hpp"

namespace {

using namespace gpuaas;
using plugin::Json;

class TestJobs {
 public:
  static constexpr plugin::Info info{"test-jobs", "1.2.3-rc.1", plugin::Stability::kAlpha};
  static constexpr plugin::Kind kinds[] = {{"example.com", "v1", "TestJob"}};

  explicit TestJobs(const Json& config) : scale_(config.value("scale", 1)) {}

  v1::WorkloadDemand demand(const plugin::Workload& w) {
    if (w.name() == "throws") throw std::logic_error("bug in the plugin");
    auto d = plugin::demand_of(w);
    *d.add_pod_sets() = plugin::pod_set("main", w.count_at("/spec/parallelism", 1) * scale_,
                                        w.at("/spec/template/spec"), "/spec/template/spec");
    return d;
  }
  v1::WorkloadLifecycle lifecycle(const plugin::Workload& w) {
    v1::WorkloadLifecycle l;
    l.set_state(w.condition_true("Complete") ? v1::WorkloadLifecycle::SUCCEEDED
                                             : v1::WorkloadLifecycle::PENDING);
    return l;
  }
  plugin::Patch admit(const plugin::Workload& w, const v1::ActionRequest& r) {
    Json o = w.json();
    plugin::apply_flavor(o, kTemplates, r);
    o["spec"]["suspend"] = false;
    return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
  }
  plugin::Patch suspend(const plugin::Workload& w, const v1::ActionRequest&) {
    Json o = w.json();
    plugin::restore_templates(o);
    o["spec"]["suspend"] = true;
    return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
  }

 private:
  static inline const std::vector<std::string> kTemplates = {"/spec/template/spec"};
  int scale_;
};

}  // namespace

GPUAAS_PLUGIN(TestJobs)

namespace {

using plugin::testing::CallFailed;
using plugin::testing::FakeHost;

const char* kJob = R"({"apiVersion":"example.com/v1","kind":"TestJob",
  "metadata":{"name":"j","namespace":"ns","resourceVersion":"7",
              "labels":{"kueue.x-k8s.io/queue-name":"q"}},
  "spec":{"suspend":true,"parallelism":2,"template":{"spec":{"containers":[{"name":"c",
      "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";

TEST(Adapter, DescriptorFollowsTheClass) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const auto& d = host.descriptor();
  EXPECT_EQ(d.struct_size, sizeof(gpuaas_plugin_descriptor));
  EXPECT_EQ(d.abi_major, GPUAAS_PLUGIN_ABI_MAJOR);
  EXPECT_STREQ(d.name, "test-jobs");
  EXPECT_STREQ(d.version, "1.2.3-rc.1");
  EXPECT_STREQ(d.status, "alpha");
  ASSERT_EQ(d.kind_count, 1u);
  EXPECT_STREQ(d.kinds[0].kind, "TestJob");
  EXPECT_EQ(d.capabilities, GPUAAS_CAP_DEMAND | GPUAAS_CAP_LIFECYCLE | GPUAAS_CAP_ADMISSION);
  EXPECT_EQ(d.api->activity, nullptr);  // not declared: not set
  EXPECT_NE(d.api->action, nullptr);
}

// .binding reaches the ABI as declared; kDefault stays DEFAULT for the host to resolve.
constexpr plugin::Kind kPreferredKind{
    .group = "example.com", .version = "v1", .kind = "Svc", .binding = plugin::Binding::kPreferred};
static_assert(plugin::detail::kind_info(kPreferredKind).binding == GPUAAS_BINDING_PREFERRED);
static_assert(plugin::detail::kind_info(
                  {.group = "", .version = "v1", .kind = "X", .binding = plugin::Binding::kOff})
                  .binding == GPUAAS_BINDING_OFF);
static_assert(plugin::detail::kind_info({.group = "",
                                         .version = "v1",
                                         .kind = "X",
                                         .binding = plugin::Binding::kRequired})
                  .binding == GPUAAS_BINDING_REQUIRED);
static_assert(!plugin::detail::binding_ok(static_cast<plugin::Binding>(7)));

TEST(Adapter, KindInfoCarriesTheBinding) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const auto& d = host.descriptor();
  ASSERT_NE(d.kind_info, nullptr);
  EXPECT_EQ(d.kind_info_size, sizeof(gpuaas_kind_info));
  EXPECT_EQ(d.kind_info[0].struct_size, sizeof(gpuaas_kind_info));
  EXPECT_EQ(d.kind_info[0].binding, GPUAAS_BINDING_DEFAULT);
  EXPECT_EQ(d.abi_minor, GPUAAS_PLUGIN_ABI_MINOR);
}

TEST(Adapter, DemandAndConfig) {
  FakeHost host(gpuaas_plugin_get_descriptor, R"({"scale": 3})");
  auto d = host.demand(kJob);
  EXPECT_EQ(d.queue_name(), "q");
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).count(), 6);
}

TEST(Adapter, ErrorsBecomeReturnCodes) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  try {
    host.demand("{not json");
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_NE(std::string(e.what()).find("object JSON"), std::string::npos);
  }
  try {
    host.demand(R"({"apiVersion":"example.com/v1","kind":"TestJob","metadata":{"name":"x"}})");
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/spec/template/spec: missing");
  }
  try {
    host.demand(R"({"apiVersion":"example.com/v1","kind":"TestJob","metadata":{"name":"throws"}})");
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INTERNAL);
    EXPECT_STREQ(e.what(), "bug in the plugin");
  }
  try {
    host.action(GPUAAS_ACTION_SCALE_TO_ZERO, kJob);
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_NOT_SUPPORTED);
  }
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, "[1,2]"), CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, "{oops"), CallFailed);
}

TEST(Adapter, AdmitThenSuspendRestoresTheObject) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  v1::ActionRequest r;
  (*r.mutable_node_labels())["pool"] = "gpu";
  r.set_reason("admitted by ClusterQueue team-a");
  auto admit = host.action(GPUAAS_ACTION_ADMIT, kJob, r);
  ASSERT_EQ(admit.actions_size(), 1);
  const auto& a = admit.actions(0);
  EXPECT_EQ(a.operation(), v1::Action::MERGE_PATCH);
  EXPECT_EQ(a.target().name(), "j");
  EXPECT_EQ(a.target().namespace_(), "ns");
  EXPECT_EQ(a.reason(), "admitted by ClusterQueue team-a");
  Json body = Json::parse(a.body_json());
  EXPECT_EQ(body["spec"]["suspend"], false);
  EXPECT_EQ(body["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(body["spec"]["template"]["spec"]["nodeSelector"]["pool"], "gpu");

  Json admitted = Json::parse(host.apply(kJob, admit));
  admitted["metadata"]["resourceVersion"] = "8";
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, admitted.dump());
  Json back = Json::parse(host.apply(admitted.dump(), suspend));
  back["metadata"]["resourceVersion"] = "7";
  EXPECT_EQ(back, Json::parse(kJob));
  // Suspending a suspended job changes nothing: no action.
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, kJob).actions_size(), 0);
}

TEST(Adapter, SemverRule) {
  static_assert(plugin::is_semver("1.0.0"));
  static_assert(plugin::is_semver("10.20.30-alpha.1+build.5"));
  static_assert(!plugin::is_semver("1.0"));
  static_assert(!plugin::is_semver("01.0.0"));
  static_assert(!plugin::is_semver("1.0.0-"));
  static_assert(!plugin::is_semver("v1.0.0"));
  SUCCEED();
}

}  // namespace
