// Lifecycle from the Job controller's status: terminal conditions, the suspend flag, the
// interim conditions of a finishing Job, active pods.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace batch_job_test;

// A vector, not a Json: a one-element brace list would turn into that element.
Json with_conditions(Json o, const std::vector<Json>& conditions) {
  o["status"]["conditions"] = conditions;
  return o;
}

Json condition(const char* type, const char* status, const char* reason = "") {
  Json c = {{"type", type}, {"status", status}};
  if (*reason != '\0') c["reason"] = reason;
  return c;
}

// The gpu_job, unsuspended (admitted) and started.
Json started() {
  Json o = gpu_job(2);
  o["spec"]["suspend"] = false;
  o["status"]["startTime"] = "2026-03-01T10:00:00Z";
  return o;
}

v1::WorkloadLifecycle lifecycle(const Json& o) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  return host.lifecycle(o.dump());
}

TEST(BatchJobLifecycle, TerminalConditionsWinOverEverything) {
  auto l =
      lifecycle(with_conditions(started(), {condition("SuccessCriteriaMet", "True"),
                                            condition("Complete", "True", "CompletionsReached")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUCCEEDED);
  EXPECT_EQ(l.reason(), "Complete: CompletionsReached");
  Json failed = with_conditions(started(), {condition("FailureTarget", "True"),
                                            condition("Failed", "True", "BackoffLimitExceeded")});
  failed["spec"]["suspend"] = true;
  failed["status"]["active"] = 1;
  l = lifecycle(failed);
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::FAILED);
  EXPECT_EQ(l.reason(), "Failed: BackoffLimitExceeded");
  EXPECT_EQ(lifecycle(with_conditions(started(), {condition("Complete", "False")})).state(),
            v1::WorkloadLifecycle::PENDING);
}

TEST(BatchJobLifecycle, SuspendFlagThenSuspendedCondition) {
  Json o = started();
  o["spec"]["suspend"] = true;
  o["status"]["active"] = 2;  // pods still being deleted
  auto l = lifecycle(o);
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(l.reason(), "spec.suspend is true");
  // Resumed in the spec, not yet seen by the controller.
  l = lifecycle(with_conditions(started(), {condition("Suspended", "True", "JobSuspended")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(l.reason(), "Suspended: JobSuspended");
  Json resumed = with_conditions(started(), {condition("Suspended", "False", "JobResumed")});
  resumed["status"]["active"] = 2;
  EXPECT_EQ(lifecycle(resumed).state(), v1::WorkloadLifecycle::RUNNING);
}

TEST(BatchJobLifecycle, ActivePodsRun) {
  Json o = started();
  o["status"]["active"] = 2;
  o["status"]["ready"] = 1;
  auto l = lifecycle(o);
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(l.reason(), "2 active, 1 ready");
}

TEST(BatchJobLifecycle, FinishingJobStillRunsWhileItsPodsTerminate) {
  auto l = lifecycle(
      with_conditions(started(), {condition("FailureTarget", "True", "PodFailurePolicy")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(l.reason(), "FailureTarget: PodFailurePolicy");
  l = lifecycle(
      with_conditions(started(), {condition("SuccessCriteriaMet", "True", "SuccessPolicy")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(l.reason(), "SuccessCriteriaMet: SuccessPolicy");
}

TEST(BatchJobLifecycle, PendingWithoutActivePods) {
  Json o = started();
  o["status"]["active"] = 0;
  auto l = lifecycle(o);
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(l.reason(), "no active pods");
  Json unsuspended = gpu_job(2);
  unsuspended["spec"].erase("suspend");
  l = lifecycle(unsuspended);
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(l.reason(), "no status yet");
}

TEST(BatchJobLifecycle, MalformedFieldsAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json o = started();
  o["spec"]["suspend"] = "no";
  EXPECT_EQ(rc_of([&] { host.lifecycle(o.dump()); }), GPUAAS_RC_INVALID_INPUT);
  o = started();
  o["status"]["active"] = "two";
  EXPECT_EQ(rc_of([&] { host.lifecycle(o.dump()); }), GPUAAS_RC_INVALID_INPUT);
  o = started();
  o["status"]["ready"] = -1;
  EXPECT_EQ(rc_of([&] { host.lifecycle(o.dump()); }), GPUAAS_RC_INVALID_INPUT);
}

}  // namespace
