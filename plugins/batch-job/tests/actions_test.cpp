// ADMIT and SUSPEND beyond the sample: the template's own selector and tolerations, another
// flavor before the Job ever ran, a Job that ran (its template is frozen), partial admission,
// stale and malformed objects.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace batch_job_test;
namespace plugin = gpuaas::plugin;

Json admitted(FakeHost& host, const Json& o, const v1::ActionRequest& r) {
  return Json::parse(host.apply(o.dump(), host.action(GPUAAS_ACTION_ADMIT, o.dump(), r)));
}

Json suspended(FakeHost& host, const Json& o) {
  return Json::parse(host.apply(o.dump(), host.action(GPUAAS_ACTION_SUSPEND, o.dump())));
}

// What the Job controller writes once the Job runs.
Json ran(Json o) {
  o["status"]["startTime"] = "2026-03-01T10:00:00Z";
  o["status"]["active"] = 2;
  return o;
}

TEST(BatchJobActions, AdmitKeepsTheTemplatesOwnSelectorAndTolerations) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto admit = host.action(GPUAAS_ACTION_ADMIT, gpu_job().dump(), flavor_request());
  ASSERT_EQ(admit.actions_size(), 1);
  EXPECT_EQ(Json::parse(admit.actions(0).body_json())["metadata"]["resourceVersion"], "5");
  Json a = Json::parse(host.apply(gpu_job().dump(), admit));
  const Json& spec = a["spec"]["template"]["spec"];
  EXPECT_EQ(spec["nodeSelector"], (Json{{"zone", "a"}, {"gpu.pool", "a100"}}));
  ASSERT_EQ(spec["tolerations"].size(), 2u);
  EXPECT_EQ(spec["tolerations"][0]["key"], "batch");
  EXPECT_EQ(a["spec"]["suspend"], false);
  EXPECT_EQ(a["spec"]["parallelism"], 2);
}

TEST(BatchJobActions, AnotherFlavorBeforeTheJobRanReplacesTheFirst) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Admitted to a100, suspended before the controller started it: the template may change.
  Json s = suspended(host, admitted(host, gpu_job(), flavor_request()));
  EXPECT_EQ(s["spec"]["template"]["spec"]["nodeSelector"]["gpu.pool"], "a100");
  Json b = admitted(host, s, flavor_request("h100"));
  const Json& spec = b["spec"]["template"]["spec"];
  EXPECT_EQ(spec["nodeSelector"], (Json{{"zone", "a"}, {"gpu.pool", "h100"}}));
  EXPECT_EQ(spec["tolerations"].size(), 2u);  // a100's toleration went with its flavor
  EXPECT_EQ(b["metadata"]["annotations"][plugin::kFlavorAnnotation], "h100");
  Json back = suspended(host, suspended(host, b));
  EXPECT_EQ(back, gpu_job());
}

TEST(BatchJobActions, AJobThatRanKeepsItsTemplate) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json running = ran(admitted(host, gpu_job(), flavor_request()));
  // SUSPEND of a running Job: the flag only, whatever the template carries.
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, running.dump());
  ASSERT_EQ(suspend.actions_size(), 1);
  EXPECT_EQ(Json::parse(suspend.actions(0).body_json()),
            Json::parse(R"({"metadata":{"resourceVersion":"5"},"spec":{"suspend":true}})"));
  Json held = Json::parse(host.apply(running.dump(), suspend));
  // Suspended but started: still no template change.
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, held.dump()).actions_size(), 0);
  // Back to the same flavor: the flag only.
  auto again = host.action(GPUAAS_ACTION_ADMIT, held.dump(), flavor_request());
  ASSERT_EQ(again.actions_size(), 1);
  EXPECT_EQ(Json::parse(again.actions(0).body_json()),
            Json::parse(R"({"metadata":{"resourceVersion":"5"},"spec":{"suspend":false}})"));
  // Another flavor would need a template change the API server refuses.
  try {
    host.action(GPUAAS_ACTION_ADMIT, held.dump(), flavor_request("h100"));
    ADD_FAILURE() << "admitted to another flavor";
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_NE(std::string(e.what()).find("/status/startTime: the Job has run"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("flavor \"h100\""), std::string::npos) << e.what();
  }
}

TEST(BatchJobActions, PartialAdmissionLeavesParallelism) {
  FakeHost host(gpuaas_plugin_get_descriptor, R"({"partial_admission": true})");
  Json job = gpu_job(4);
  job["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"] = "2";
  EXPECT_EQ(host.demand(job.dump()).pod_sets(0).min_count(), 2);
  Json a = admitted(host, job, flavor_request());
  EXPECT_EQ(a["spec"]["parallelism"], 4);  // the ActionRequest says nothing of the count
  EXPECT_FALSE(a["spec"].contains("completions"));
}

// Created without spec.suspend (no webhook held it): it starts at once, and its template can
// no longer take a flavor; only a flavor without labels or tolerations admits it.
TEST(BatchJobActions, AJobNeverSuspendedTakesNoFlavor) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = sample_job();
  o["metadata"].erase("resourceVersion");
  try {
    host.action(GPUAAS_ACTION_ADMIT, o.dump(), flavor_request());
    ADD_FAILURE() << "admitted";
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_EQ(std::string(e.what()),
              "/spec/suspend: the Job is not suspended, so Kubernetes keeps spec.template as it "
              "is (flavor \"\"); flavor \"a100\" would change it");
  }
  v1::ActionRequest plain;
  plain.set_flavor("default");
  Json body = Json::parse(host.action(GPUAAS_ACTION_ADMIT, o.dump(), plain).actions(0).body_json());
  EXPECT_EQ(body["spec"], Json::parse(R"({"suspend":false})"));
  EXPECT_EQ(body["metadata"]["annotations"][gpuaas::plugin::kFlavorAnnotation], "default");
  EXPECT_FALSE(body["metadata"].contains("resourceVersion"));  // the object has none
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, o.dump());
  EXPECT_EQ(Json::parse(suspend.actions(0).body_json()),
            Json::parse(R"({"spec":{"suspend":true}})"));
}

TEST(BatchJobActions, StalePatchIsRefusedByTheApiServer) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = gpu_job();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, o.dump(), flavor_request());
  o["metadata"]["resourceVersion"] = "6";  // someone else wrote in between
  EXPECT_ANY_THROW(host.apply(o.dump(), admit));
}

TEST(BatchJobActions, FlavorWithoutLabelsOnlyUnsuspends) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const Json o = gpu_job();
  Json a = admitted(host, o, v1::ActionRequest());
  EXPECT_EQ(a["spec"]["template"], o["spec"]["template"]);
  EXPECT_EQ(a["spec"]["suspend"], false);
  EXPECT_EQ(suspended(host, suspended(host, a)), o);
}

TEST(BatchJobActions, MalformedObjectsAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto rc = [&](gpuaas_action_kind kind, const Json& o,
                const v1::ActionRequest& r = flavor_request()) {
    return rc_of([&] { host.action(kind, o.dump(), r); });
  };
  Json o = gpu_job();
  o["spec"]["suspend"] = "yes";
  EXPECT_EQ(rc(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(rc(GPUAAS_ACTION_SUSPEND, o), GPUAAS_RC_INVALID_INPUT);
  o = gpu_job();
  o["spec"]["template"].erase("spec");
  EXPECT_EQ(rc(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  o = gpu_job();
  o["spec"]["template"]["spec"]["nodeSelector"] = "zone=a";
  EXPECT_EQ(rc(GPUAAS_ACTION_ADMIT, o), GPUAAS_RC_INVALID_INPUT);
  o = gpu_job();
  o["spec"] = "none";
  EXPECT_EQ(rc(GPUAAS_ACTION_SUSPEND, o), GPUAAS_RC_INVALID_INPUT);
  v1::ActionRequest bad;
  bad.add_tolerations_json("{nope");
  EXPECT_EQ(rc(GPUAAS_ACTION_ADMIT, gpu_job(), bad), GPUAAS_RC_INVALID_INPUT);
}

}  // namespace
