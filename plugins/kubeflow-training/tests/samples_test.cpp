// Every real sample of the plugin's kinds under shared/manifests: demand with numbers worked out
// by hand from the YAML, lifecycle, and the admit/suspend round trip.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace gpuaas;
using kft_test::Json;
using plugin::per_pod_milli;
using plugin::testing::FakeHost;

constexpr int64_t kGi = 1024LL * 1024 * 1024;
constexpr int64_t kMi = 1024LL * 1024;

struct Sample {
  const char* file;
  const char* kind;
  const char* name;
};

// Every document of the plugin's kinds in shared/manifests (grep -lE "kind: (PyTorchJob|TFJob|
// MPIJob|TrainJob)" -r shared/manifests).
const Sample kSamples[] = {
    {"kubeflow-training/simple.yaml", "PyTorchJob", "pytorch-simple"},
    {"kubeflow-training/pytorch_job_mnist_nccl.yaml", "PyTorchJob", "pytorch-dist-mnist-nccl"},
    {"kueue/sample-pytorchjob.yaml", "PyTorchJob", "pytorch-simple"},
    {"kubeflow-training/multi_worker_tfjob.yaml", "TFJob", "multi-worker"},
    {"kubeflow-training/tensorflow-mnist.yaml", "MPIJob", "tensorflow-mnist"},
    {"kubeflow-mpi-operator/tensorflow-benchmarks.yaml", "MPIJob", "tensorflow-benchmarks"},
    {"kubeflow-training/03-kueue-integration.yaml", "TrainJob", "kueue-example"},
    {"kubeflow-training/lammps-train-gpus.yaml", "TrainJob", "lammps-flux"},
};

v1::WorkloadDemand demand(const char* file, const char* kind) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  return host.demand(kft_test::load(file, kind).dump());
}

TEST(KubeflowTrainingSamples, PyTorchSimpleHasTwoPodSetsWithoutResources) {
  auto d = demand("kubeflow-training/simple.yaml", "PyTorchJob");
  EXPECT_EQ(d.queue_name(), "");
  ASSERT_EQ(d.pod_sets_size(), 2);
  EXPECT_EQ(d.pod_sets(0).name(), "master");
  EXPECT_EQ(d.pod_sets(0).count(), 1);
  EXPECT_EQ(d.pod_sets(0).per_pod_size(), 0);
  EXPECT_EQ(d.pod_sets(1).name(), "worker");
  EXPECT_EQ(d.pod_sets(1).count(), 1);
  EXPECT_EQ(d.pod_sets(1).min_count(), 0);
}

TEST(KubeflowTrainingSamples, PyTorchNcclOneGpuPerPodFromLimits) {
  auto d = demand("kubeflow-training/pytorch_job_mnist_nccl.yaml", "PyTorchJob");
  ASSERT_EQ(d.pod_sets_size(), 2);
  for (const auto& s : d.pod_sets()) {
    EXPECT_EQ(s.count(), 1);
    EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 1000) << s.name();
    EXPECT_EQ(s.per_pod_size(), 1);
  }
}

TEST(KubeflowTrainingSamples, KueuePyTorchJobQueueAndCpuRequests) {
  auto d = demand("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  EXPECT_EQ(d.queue_name(), "user-queue");
  ASSERT_EQ(d.pod_sets_size(), 2);
  for (const auto& s : d.pod_sets()) {
    EXPECT_EQ(s.count(), 1);
    EXPECT_EQ(per_pod_milli(s, "cpu"), 1000);
    EXPECT_EQ(per_pod_milli(s, "memory"), 200 * kMi * 1000);
    EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 0);
  }
}

TEST(KubeflowTrainingSamples, TFJobTwoGpuWorkers) {
  auto d = demand("kubeflow-training/multi_worker_tfjob.yaml", "TFJob");
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).name(), "worker");
  EXPECT_EQ(d.pod_sets(0).count(), 2);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "nvidia.com/gpu"), 1000);
}

TEST(KubeflowTrainingSamples, TrainingOperatorMPIJobCpuAndMemoryLimits) {
  auto d = demand("kubeflow-training/tensorflow-mnist.yaml", "MPIJob");
  ASSERT_EQ(d.pod_sets_size(), 2);
  EXPECT_EQ(d.pod_sets(0).name(), "launcher");
  EXPECT_EQ(d.pod_sets(0).count(), 1);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "cpu"), 1000);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "memory"), 2 * kGi * 1000);
  EXPECT_EQ(d.pod_sets(1).name(), "worker");
  EXPECT_EQ(d.pod_sets(1).count(), 2);
  EXPECT_EQ(per_pod_milli(d.pod_sets(1), "cpu"), 2000);
  EXPECT_EQ(per_pod_milli(d.pod_sets(1), "memory"), 4 * kGi * 1000);
}

TEST(KubeflowTrainingSamples, MpiOperatorV2beta1LauncherWithoutResourcesTwoGpuWorkers) {
  auto d = demand("kubeflow-mpi-operator/tensorflow-benchmarks.yaml", "MPIJob");
  ASSERT_EQ(d.pod_sets_size(), 2);
  EXPECT_EQ(d.pod_sets(0).name(), "launcher");
  EXPECT_EQ(d.pod_sets(0).count(), 1);
  EXPECT_EQ(d.pod_sets(0).per_pod_size(), 0);
  EXPECT_EQ(d.pod_sets(1).name(), "worker");
  EXPECT_EQ(d.pod_sets(1).count(), 2);
  EXPECT_EQ(per_pod_milli(d.pod_sets(1), "nvidia.com/gpu"), 1000);
}

TEST(KubeflowTrainingSamples, TrainJobKueueExampleRequestsWinOverLimits) {
  auto d = demand("kubeflow-training/03-kueue-integration.yaml", "TrainJob");
  EXPECT_EQ(d.queue_name(), "training-queue");
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).name(), "node");
  EXPECT_EQ(d.pod_sets(0).count(), 3);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "cpu"), 2000);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "memory"), 4 * kGi * 1000);
}

TEST(KubeflowTrainingSamples, TrainJobLammpsTwoGpuNodes) {
  auto d = demand("kubeflow-training/lammps-train-gpus.yaml", "TrainJob");
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).name(), "node");
  EXPECT_EQ(d.pod_sets(0).count(), 2);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "nvidia.com/gpu"), 1000);
  EXPECT_EQ(d.pod_sets(0).per_pod_size(), 1);
}

TEST(KubeflowTrainingSamples, LifecycleWithoutStatus) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const auto& s : kSamples) {
    auto l = host.lifecycle(kft_test::load(s.file, s.kind, s.name).dump());
    if (std::string(s.name) == "kueue-example") {  // created with spec.suspend: true
      EXPECT_EQ(l.state(), v1::WorkloadLifecycle::SUSPENDED) << s.file;
      EXPECT_EQ(l.reason(), "spec.suspend is true");
    } else {
      EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING) << s.file;
      EXPECT_EQ(l.reason(), "no status yet") << s.file;
    }
  }
}

// Admit -> apply -> suspend -> apply gives the queued object back; both actions carry the
// resourceVersion, and repeating either changes nothing.
TEST(KubeflowTrainingSamples, AdmitSuspendRoundTrip) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const auto& s : kSamples) {
    SCOPED_TRACE(s.file);
    const Json original = kft_test::queued(kft_test::load(s.file, s.kind, s.name));
    const std::string flag = kft_test::suspend_pointer(original);
    auto admit = host.action(GPUAAS_ACTION_ADMIT, original.dump(), kft_test::flavor_request());
    ASSERT_EQ(admit.actions_size(), 1);
    EXPECT_EQ(admit.actions(0).reason(), "admitted by ClusterQueue team-a");
    EXPECT_EQ(admit.actions(0).target().name(), s.name);
    Json body = Json::parse(admit.actions(0).body_json());
    EXPECT_EQ(body["metadata"]["resourceVersion"], "41");
    EXPECT_EQ(body["metadata"]["annotations"][plugin::kFlavorAnnotation], "a100");

    Json admitted = Json::parse(host.apply(original.dump(), admit));
    EXPECT_EQ(admitted[Json::json_pointer(flag)], false);
    EXPECT_EQ(host.lifecycle(admitted.dump()).state(), v1::WorkloadLifecycle::PENDING);
    admitted["metadata"]["resourceVersion"] = "42";
    EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, admitted.dump(), kft_test::flavor_request())
                  .actions_size(),
              0);

    auto suspend = host.action(GPUAAS_ACTION_SUSPEND, admitted.dump());
    ASSERT_EQ(suspend.actions_size(), 1);
    EXPECT_EQ(Json::parse(suspend.actions(0).body_json())["metadata"]["resourceVersion"], "42");
    Json back = Json::parse(host.apply(admitted.dump(), suspend));
    back["metadata"]["resourceVersion"] = "41";
    EXPECT_EQ(back, original);
    EXPECT_EQ(host.lifecycle(back.dump()).state(), v1::WorkloadLifecycle::SUSPENDED);
    EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, original.dump()).actions_size(), 0);
  }
}

// Where the flavor lands: every replica template's pod spec.
TEST(KubeflowTrainingSamples, AdmitPutsTheFlavorIntoEveryReplicaTemplate) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const Json tf = kft_test::queued(
      kft_test::load("kubeflow-mpi-operator/tensorflow-benchmarks.yaml", "MPIJob"));
  Json admitted = Json::parse(host.apply(
      tf.dump(), host.action(GPUAAS_ACTION_ADMIT, tf.dump(), kft_test::flavor_request())));
  for (const char* type : {"Launcher", "Worker"}) {
    const Json& spec = admitted["spec"]["mpiReplicaSpecs"][type]["template"]["spec"];
    EXPECT_EQ(spec["nodeSelector"], (Json{{"gpu.pool", "a100"}})) << type;
    ASSERT_EQ(spec["tolerations"].size(), 1u) << type;
    EXPECT_EQ(spec["tolerations"][0]["key"], "nvidia.com/gpu");
  }
  EXPECT_EQ(admitted["spec"]["runPolicy"]["cleanPodPolicy"], "Running");  // untouched
}

// A TrainJob has no templates: the flavor goes into an override of the trainer job.
TEST(KubeflowTrainingSamples, TrainJobAdmitAppendsAnOverrideForTheTrainerJob) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  const Json tj = kft_test::load("kubeflow-training/03-kueue-integration.yaml", "TrainJob");
  auto admit = host.action(GPUAAS_ACTION_ADMIT, tj.dump(), kft_test::flavor_request());
  Json admitted = Json::parse(host.apply(tj.dump(), admit));
  EXPECT_EQ(admitted["spec"]["suspend"], false);
  const Json& overrides = admitted["spec"]["podSpecOverrides"];
  ASSERT_EQ(overrides.size(), 1u);
  EXPECT_EQ(overrides[0]["targetJobs"], Json::parse(R"([{"name":"node"}])"));
  EXPECT_EQ(overrides[0]["nodeSelector"]["gpu.pool"], "a100");
  EXPECT_EQ(overrides[0]["tolerations"][0]["effect"], "NoSchedule");
  EXPECT_EQ(admitted["spec"]["trainer"], tj["spec"]["trainer"]);  // immutable: untouched
}

}  // namespace
