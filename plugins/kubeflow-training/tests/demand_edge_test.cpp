// Demand on objects written for the edge cases: resources in every form, counts at and past
// the int32 limit, elastic workers, missing or mistyped fields, broken JSON, the configuration.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace gpuaas;
using kft_test::Json;
using plugin::per_pod_milli;
using plugin::testing::CallFailed;
using plugin::testing::FakeHost;

Json container(const Json& resources) {
  return {{"name", "c"}, {"image", "i"}, {"resources", resources}};
}

Json replica(const Json& replicas, const Json& resources) {
  Json r = {{"template", {{"spec", {{"containers", Json::array({container(resources)})}}}}}};
  if (!replicas.is_null()) r["replicas"] = replicas;
  return r;
}

Json pytorch(const Json& worker_replicas, const Json& resources = Json::object()) {
  return {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata",
       {{"name", "pt"},
        {"namespace", "ns"},
        {"labels",
         {{"kueue.x-k8s.io/queue-name", "q"}, {"kueue.x-k8s.io/priority-class", "high"}}}}},
      {"spec",
       {{"pytorchReplicaSpecs",
         {{"Master", replica(1, resources)}, {"Worker", replica(worker_replicas, resources)}}}}}};
}

Json trainjob(const Json& trainer) {
  return {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
          {"kind", "TrainJob"},
          {"metadata", {{"name", "tj"}, {"namespace", "ns"}}},
          {"spec", {{"runtimeRef", {{"name", "torch-distributed"}}}, {"trainer", trainer}}}};
}

// The InvalidInput message of a demand call (fails the test when the call succeeds).
std::string invalid(const Json& object) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  try {
    host.demand(object.dump());
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << object.dump();
  return {};
}

v1::PodSet worker(const Json& object) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(object.dump());
  return d.pod_sets(d.pod_sets_size() - 1);
}

TEST(KubeflowTrainingDemand, QueueAndPriorityFromKueueLabels) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(pytorch(2).dump());
  EXPECT_EQ(d.queue_name(), "q");
  EXPECT_EQ(d.priority_class(), "high");
}

TEST(KubeflowTrainingDemand, ResourcesAsKubernetesCountsThem) {
  // No resources at all.
  EXPECT_EQ(worker(pytorch(2)).per_pod_size(), 0);
  // Requests without limits.
  auto req = worker(pytorch(2, {{"requests", {{"cpu", "500m"}, {"nvidia.com/gpu", "2"}}}}));
  EXPECT_EQ(per_pod_milli(req, "cpu"), 500);
  EXPECT_EQ(per_pod_milli(req, "nvidia.com/gpu"), 2000);
  // Limits without requests: the limit is the request.
  auto lim = worker(pytorch(2, {{"limits", {{"memory", "1Gi"}, {"nvidia.com/gpu", 4}}}}));
  EXPECT_EQ(per_pod_milli(lim, "memory"), 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(per_pod_milli(lim, "nvidia.com/gpu"), 4000);
  // Fractional GPUs and MIG profiles are kept as stated.
  auto frac = worker(pytorch(2, {{"limits", {{"nvidia.com/gpu", "0.5"}}}}));
  EXPECT_EQ(per_pod_milli(frac, "nvidia.com/gpu"), 500);
  auto mig = worker(pytorch(2, {{"limits", {{"nvidia.com/mig-1g.10gb", "2"}}}}));
  EXPECT_EQ(per_pod_milli(mig, "nvidia.com/mig-1g.10gb"), 2000);
  EXPECT_EQ(per_pod_milli(mig, "nvidia.com/gpu"), 0);
}

TEST(KubeflowTrainingDemand, ReplicasDefaultToOneAndStopAtInt32) {
  EXPECT_EQ(worker(pytorch(nullptr)).count(), 1);
  EXPECT_EQ(worker(pytorch(0)).count(), 0);
  EXPECT_EQ(worker(pytorch(2147483647LL)).count(), 2147483647LL);
  EXPECT_EQ(invalid(pytorch(2147483648LL)),
            "/spec/pytorchReplicaSpecs/Worker/replicas: 2147483648 is above the Kubernetes int32 "
            "maximum 2147483647");
  EXPECT_NE(invalid(pytorch(Json(18446744073709551615ULL)))
                .find("/spec/pytorchReplicaSpecs/Worker/replicas"),
            std::string::npos);
  EXPECT_NE(invalid(pytorch(-1)).find("/spec/pytorchReplicaSpecs/Worker/replicas"),
            std::string::npos);
  EXPECT_NE(invalid(pytorch("2")).find("/spec/pytorchReplicaSpecs/Worker/replicas"),
            std::string::npos);
  EXPECT_NE(invalid(pytorch(1.5)).find("/spec/pytorchReplicaSpecs/Worker/replicas"),
            std::string::npos);
}

TEST(KubeflowTrainingDemand, ElasticPyTorchWorkersMayStartWithMinReplicas) {
  Json o = pytorch(4);
  o["spec"]["elasticPolicy"] = {{"minReplicas", 2}, {"maxReplicas", 4}};
  EXPECT_EQ(worker(o).count(), 4);
  EXPECT_EQ(worker(o).min_count(), 2);
  o["spec"]["elasticPolicy"]["minReplicas"] = 10;  // above replicas: all of them
  EXPECT_EQ(worker(o).min_count(), 4);
  o["spec"]["elasticPolicy"]["minReplicas"] = 0;  // min_count 0 would mean "all": one
  EXPECT_EQ(worker(o).min_count(), 1);
  o["spec"]["elasticPolicy"]["minReplicas"] = 2147483648LL;
  EXPECT_NE(invalid(o).find("/spec/elasticPolicy/minReplicas"), std::string::npos);
  o["spec"]["elasticPolicy"] = "elastic";
  EXPECT_EQ(invalid(o), "/spec/elasticPolicy: not an object");
  // The master is never elastic.
  o["spec"]["elasticPolicy"] = {{"minReplicas", 2}};
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.demand(o.dump()).pod_sets(0).min_count(), 0);
}

TEST(KubeflowTrainingDemand, TFJobPodSetsInKueueOrder) {
  Json o = {{"apiVersion", "kubeflow.org/v1"},
            {"kind", "TFJob"},
            {"metadata", {{"name", "tf"}}},
            {"spec",
             {{"tfReplicaSpecs",
               {{"Worker", replica(3, Json::object())},
                {"Evaluator", replica(1, Json::object())},
                {"PS", replica(2, Json::object())},
                {"Chief", replica(1, Json::object())}}}}}};
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(o.dump());
  ASSERT_EQ(d.pod_sets_size(), 4);
  EXPECT_EQ(d.pod_sets(0).name(), "chief");
  EXPECT_EQ(d.pod_sets(1).name(), "ps");
  EXPECT_EQ(d.pod_sets(1).count(), 2);
  EXPECT_EQ(d.pod_sets(2).name(), "worker");
  EXPECT_EQ(d.pod_sets(2).count(), 3);
  EXPECT_EQ(d.pod_sets(3).name(), "evaluator");
}

TEST(KubeflowTrainingDemand, MalformedObjectsAreInvalidInput) {
  Json o = pytorch(2);
  o["spec"]["pytorchReplicaSpecs"]["Worker"].erase("template");
  EXPECT_EQ(invalid(o), "/spec/pytorchReplicaSpecs/Worker/template/spec: missing");
  o = pytorch(2);
  o["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = Json::array();
  EXPECT_EQ(invalid(o),
            "/spec/pytorchReplicaSpecs/Worker/template/spec/containers: missing or empty");
  o = pytorch(2);
  o["spec"]["pytorchReplicaSpecs"]["Launcher"] = replica(1, Json::object());
  EXPECT_NE(invalid(o).find("/spec/pytorchReplicaSpecs/Launcher: unknown replica type"),
            std::string::npos);
  o["spec"]["pytorchReplicaSpecs"] = Json::array();
  EXPECT_EQ(invalid(o), "/spec/pytorchReplicaSpecs: not an object");
  o["spec"]["pytorchReplicaSpecs"] = Json::object();
  EXPECT_EQ(invalid(o), "/spec/pytorchReplicaSpecs: no replica types");
  o["spec"].erase("pytorchReplicaSpecs");
  EXPECT_EQ(invalid(o), "/spec/pytorchReplicaSpecs: missing");
  o = pytorch(2, {{"limits", {{"nvidia.com/gpu", "lots"}}}});
  EXPECT_NE(invalid(o).find("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/"
                            "resources/limits/nvidia.com/gpu"),
            std::string::npos);
  o = pytorch(2);
  o["apiVersion"] = "kubeflow.org/v1beta1";
  EXPECT_NE(invalid(o).find("/apiVersion"), std::string::npos);
}

TEST(KubeflowTrainingDemand, BrokenJsonIsAClearInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  for (const char* text : {R"({"apiVersion": )", "", "[1,2]", R"({"kind":"PyTorchJob"})"}) {
    try {
      host.demand(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT) << text;
      EXPECT_FALSE(std::string(e.what()).empty());
    }
  }
}

TEST(KubeflowTrainingDemand, TrainJobNodesTimesResourcesPerNode) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(
      trainjob({{"numNodes", 4}, {"resourcesPerNode", {{"limits", {{"nvidia.com/gpu", "0.5"}}}}}})
          .dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(d.pod_sets(0).count(), 4);
  EXPECT_EQ(per_pod_milli(d.pod_sets(0), "nvidia.com/gpu"), 500);
  // Without numNodes (the runtime's default is invisible) and without resources: one bare node.
  d = host.demand(trainjob(Json::object()).dump());
  EXPECT_EQ(d.pod_sets(0).count(), 1);
  EXPECT_EQ(d.pod_sets(0).per_pod_size(), 0);
  Json no_trainer = trainjob(nullptr);
  no_trainer["spec"].erase("trainer");
  EXPECT_EQ(host.demand(no_trainer.dump()).pod_sets(0).count(), 1);
}

TEST(KubeflowTrainingDemand, TrainJobErrorsNameItsOwnFields) {
  EXPECT_EQ(invalid(trainjob({{"numNodes", 2147483648LL}})),
            "/spec/trainer/numNodes: 2147483648 is above the Kubernetes int32 maximum 2147483647");
  EXPECT_NE(invalid(trainjob({{"numNodes", -3}})).find("/spec/trainer/numNodes"),
            std::string::npos);
  EXPECT_EQ(invalid(trainjob({{"resourcesPerNode", "big"}})),
            "/spec/trainer/resourcesPerNode: not an object");
  EXPECT_NE(invalid(trainjob({{"resourcesPerNode", {{"limits", {{"nvidia.com/gpu", "x"}}}}}}))
                .rfind("/spec/trainer/resourcesPerNode/limits/nvidia.com/gpu", 0),
            std::string::npos);
  EXPECT_EQ(invalid(trainjob(Json::array())), "/spec/trainer: not an object");
  Json no_spec = trainjob(nullptr);
  no_spec.erase("spec");
  EXPECT_EQ(invalid(no_spec), "/spec: missing");
}

TEST(KubeflowTrainingConfig, KeysAreCheckedAtCreate) {
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_treshold": 5})"), CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": "5"})"),
               CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 101})"),
               CallFailed);
  EXPECT_THROW(
      FakeHost(gpuaas_plugin_get_descriptor, R"({"trainjob_overrides": "runtimePatches"})"),
      CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"trainjob_trainer_job": ""})"),
               CallFailed);
  FakeHost host(gpuaas_plugin_get_descriptor,
                R"({"gpu_util_threshold": 10, "trainjob_trainer_job": "trainer"})");
  EXPECT_EQ(host.demand(trainjob(Json::object()).dump()).pod_sets(0).name(), "trainer");
}

TEST(KubeflowTrainingDescriptor, KindsAndCapabilities) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.summary(),
            "kubeflow-training 0.1.0 stable abi 1.3 gpuaas.v1 | kubeflow.org/v1 PyTorchJob, "
            "kubeflow.org/v1 TFJob, kubeflow.org/v2beta1 MPIJob, kubeflow.org/v1 MPIJob, "
            "trainer.kubeflow.org/v1alpha1 TrainJob | demand lifecycle admission activity");
  try {
    host.action(GPUAAS_ACTION_SCALE_TO_ZERO, pytorch(2).dump());
    ADD_FAILURE() << "scale to zero offered";
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_NOT_SUPPORTED);
  }
}

}  // namespace
