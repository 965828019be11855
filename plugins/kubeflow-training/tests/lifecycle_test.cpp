// Lifecycle from the operators' status conditions and the suspend flags.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace gpuaas;
using kft_test::Json;
using plugin::testing::FakeHost;

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

v1::WorkloadLifecycle lifecycle(const Json& o) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  return host.lifecycle(o.dump());
}

TEST(KubeflowTrainingLifecycle, KubeflowJobConditions) {
  const Json pt = kft_test::load("kubeflow-training/pytorch_job_mnist_nccl.yaml", "PyTorchJob");
  auto l = lifecycle(with_conditions(pt, {condition("Created", "True", "PyTorchJobCreated")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(l.reason(), "Created: PyTorchJobCreated");
  l = lifecycle(with_conditions(
      pt, {condition("Created", "True"), condition("Running", "True", "PyTorchJobRunning")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(l.reason(), "Running: PyTorchJobRunning");
  l = lifecycle(with_conditions(pt, {condition("Running", "False"),
                                     condition("Restarting", "True", "PyTorchJobRestarting")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::RUNNING);
  EXPECT_EQ(l.reason(), "Restarting: PyTorchJobRestarting");
  l = lifecycle(with_conditions(
      pt, {condition("Running", "False"), condition("Succeeded", "True", "PyTorchJobSucceeded")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUCCEEDED);
  EXPECT_EQ(l.reason(), "Succeeded: PyTorchJobSucceeded");
  l = lifecycle(with_conditions(pt, {condition("Failed", "True", "PyTorchJobFailed")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::FAILED);
  l = lifecycle(with_conditions(pt, {condition("Suspended", "True", "PyTorchJobSuspended")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(l.reason(), "Suspended: PyTorchJobSuspended");
}

TEST(KubeflowTrainingLifecycle, SuspendFlagAndTerminalConditionsWin) {
  Json mpi = kft_test::load("kubeflow-mpi-operator/tensorflow-benchmarks.yaml", "MPIJob");
  mpi["spec"]["runPolicy"]["suspend"] = true;
  auto l = lifecycle(with_conditions(mpi, {condition("Running", "True")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(l.reason(), "spec.runPolicy.suspend is true");
  l = lifecycle(with_conditions(mpi, {condition("Succeeded", "True")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUCCEEDED);
  EXPECT_EQ(l.reason(), "Succeeded");
  mpi["spec"]["runPolicy"]["suspend"] = "no";
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_THROW(host.lifecycle(mpi.dump()), plugin::testing::CallFailed);
}

TEST(KubeflowTrainingLifecycle, TrainJobConditionsAndChildJobs) {
  Json tj = kft_test::load("kubeflow-training/lammps-train-gpus.yaml", "TrainJob");
  EXPECT_EQ(lifecycle(tj).state(), v1::WorkloadLifecycle::PENDING);
  Json running = tj;
  running["status"]["jobsStatus"] =
      Json::parse(R"([{"name":"node","active":2,"ready":2,"succeeded":0,"failed":0}])");
  EXPECT_EQ(lifecycle(running).state(), v1::WorkloadLifecycle::RUNNING);
  Json created = with_conditions(tj, {condition("Created", "True", "JobsCreated")});
  EXPECT_EQ(lifecycle(created).state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(lifecycle(created).reason(), "Created: JobsCreated");
  auto l = lifecycle(with_conditions(tj, {condition("Complete", "True", "JobsCompleted")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUCCEEDED);
  EXPECT_EQ(l.reason(), "Complete: JobsCompleted");
  l = lifecycle(with_conditions(tj, {condition("Failed", "True", "DeadlineExceeded")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::FAILED);
  EXPECT_EQ(l.reason(), "Failed: DeadlineExceeded");
  l = lifecycle(with_conditions(tj, {condition("Suspended", "True", "Suspended")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(l.reason(), "Suspended");
  // Resumed: the Suspended condition turns False and the child jobs start.
  l = lifecycle(with_conditions(running, {condition("Suspended", "False", "Resumed")}));
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::RUNNING);
}

}  // namespace
