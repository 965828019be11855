// Demand of the published samples and of hand-written edge cases, through the fake host.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using gpuaas::plugin::testing::CallFailed;
using gpuaas::plugin::testing::FakeHost;
using namespace kserve_test;

// The message of a call that must fail with `rc`.
std::string failure(FakeHost& host, const Json& object, gpuaas_rc rc) {
  try {
    host.demand(object.dump());
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), rc) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "demand succeeded for " << object.dump();
  return {};
}

TEST(kserve_plugin_descriptor, NameKindsAndCapabilities) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.summary(),
            "kserve 0.1.0 alpha abi 1.3 gpuaas.v1 | serving.kserve.io/v1beta1 InferenceService | "
            "demand lifecycle admission scale-to-zero activity autoscale");
}

// autoscale.yaml: a TensorFlow predictor without resources; minReplicas unset (KServe: 1).
TEST(kserve_plugin_demand, SampleAutoscaleHasNoResources) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(sample("autoscale.yaml").dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& p = d.pod_sets(0);
  EXPECT_EQ(p.name(), "predictor");
  EXPECT_EQ(p.count(), 1);
  EXPECT_EQ(p.min_count(), 1);
  EXPECT_EQ(p.per_pod_size(), 0);
  EXPECT_TRUE(p.node_selector().empty());
  EXPECT_EQ(d.queue_name(), "");
}

// autoscale_gpu.yaml: limits only, as a bare number: nvidia.com/gpu: 1.
TEST(kserve_plugin_demand, SampleAutoscaleGpuTakesTheLimit) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(sample("autoscale_gpu.yaml").dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& p = d.pod_sets(0);
  EXPECT_EQ(p.count(), 1);
  EXPECT_EQ(milli(p, "nvidia.com/gpu"), 1000);
  EXPECT_EQ(p.per_pod_size(), 1);
}

// hf_isvc.yaml: the new-style model spec; requests = limits = 6 cpu, 24Gi, 1 GPU.
TEST(kserve_plugin_demand, SampleHuggingFaceModel) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(sample("hf_isvc.yaml").dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& p = d.pod_sets(0);
  EXPECT_EQ(p.count(), 1);
  EXPECT_EQ(p.min_count(), 1);
  EXPECT_EQ(milli(p, "cpu"), 6000);
  EXPECT_EQ(milli(p, "memory"), 24 * kGi * 1000);
  EXPECT_EQ(milli(p, "nvidia.com/gpu"), 1000);
  EXPECT_EQ(p.per_pod_size(), 3);
}

// kserve-isvc.yaml: minReplicas 0 (scale to zero), a nodeSelector, 24 cpu, 48Gi, 1 GPU.
TEST(kserve_plugin_demand, SampleLlamaScalesFromZero) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(sample("kserve-isvc.yaml").dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& p = d.pod_sets(0);
  EXPECT_EQ(p.count(), 1);      // serving takes one pod
  EXPECT_EQ(p.min_count(), 0);  // and Knative may remove it when idle
  EXPECT_EQ(milli(p, "cpu"), 24000);
  EXPECT_EQ(milli(p, "memory"), 48 * kGi * 1000);
  EXPECT_EQ(milli(p, "nvidia.com/gpu"), 1000);
  ASSERT_EQ(p.node_selector().size(), 1u);
  EXPECT_EQ(p.node_selector().at("node.kubernetes.io/instance-type"), "g5.8xlarge");
}

// The LLMInferenceService sample is another kind, which this plugin does not claim.
TEST(kserve_plugin_demand, RefusesLLMInferenceService) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json llm = Json::parse(gpuaas::plugin::testing::load_manifest(
      manifest_path("llm-inference-service-qwen2-7b-gpu.yaml"), "LLMInferenceService"));
  std::string msg = failure(host, llm, GPUAAS_RC_INVALID_INPUT);
  EXPECT_NE(msg.find("LLMInferenceService"), std::string::npos) << msg;
}

TEST(kserve_plugin_demand, EveryComponentIsAPodSet) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json spec = {
      {"predictor",
       {{"minReplicas", 3},
        {"maxReplicas", 5},
        {"sklearn",
         {{"storageUri", "gs://m"}, {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}}},
      {"transformer",
       {{"containers",
         {{{"name", "t"}, {"image", "t"}, {"resources", {{"requests", {{"cpu", "500m"}}}}}}}}}},
      {"explainer",
       {{"minReplicas", 0},
        {"art", {{"type", "SquareAttack"}, {"resources", {{"requests", {{"memory", "1Gi"}}}}}}}}}};
  Json o = isvc(spec);
  o["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "team-a"},
                             {"kueue.x-k8s.io/priority-class", "high"}};
  auto d = host.demand(o.dump());
  EXPECT_EQ(d.queue_name(), "team-a");
  EXPECT_EQ(d.priority_class(), "high");
  ASSERT_EQ(d.pod_sets_size(), 3);
  EXPECT_EQ(d.pod_sets(0).name(), "predictor");
  EXPECT_EQ(d.pod_sets(0).count(), 3);
  EXPECT_EQ(d.pod_sets(0).min_count(), 3);
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 2000);
  EXPECT_EQ(d.pod_sets(1).name(), "transformer");
  EXPECT_EQ(d.pod_sets(1).count(), 1);
  EXPECT_EQ(milli(d.pod_sets(1), "cpu"), 500);
  EXPECT_EQ(d.pod_sets(2).name(), "explainer");
  EXPECT_EQ(d.pod_sets(2).count(), 1);
  EXPECT_EQ(d.pod_sets(2).min_count(), 0);
  EXPECT_EQ(milli(d.pod_sets(2), "memory"), kGi * 1000);
}

TEST(kserve_plugin_demand, CustomContainersAndSidecars) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Custom predictor: the containers are the pod; requests win over limits per container.
  Json spec = {{"predictor",
                {{"containers",
                  {{{"name", "kserve-container"},
                    {"resources",
                     {{"requests", {{"cpu", "2"}, {"nvidia.com/gpu", "1"}}},
                      {"limits", {{"cpu", "4"}, {"nvidia.com/gpu", "1"}}}}}},
                   {{"name", "proxy"}, {"resources", {{"requests", {{"cpu", "100m"}}}}}}}}}}};
  auto d = host.demand(isvc(spec).dump());
  ASSERT_EQ(d.pod_sets_size(), 1);
  EXPECT_EQ(milli(d.pod_sets(0), "cpu"), 2100);
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 1000);

  // A model spec beside containers (a collocated transformer): both containers count.
  Json both = model_predictor({{"limits", {{"nvidia.com/gpu", "1"}, {"cpu", "1"}}}});
  both["containers"] = {
      {{"name", "transformer-container"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}};
  d = host.demand(isvc({{"predictor", both}}).dump());
  EXPECT_EQ(milli(d.pod_sets(0), "cpu"), 2000);
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 1000);
}

TEST(kserve_plugin_demand, RequestsLimitsFractionsAndMig) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Requests without limits.
  auto d = host.demand(
      isvc({{"predictor", model_predictor({{"requests", {{"nvidia.com/gpu", "2"}}}})}}).dump());
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 2000);
  // Limits without requests: the request defaults to the limit.
  d = host.demand(
      isvc({{"predictor", model_predictor({{"limits", {{"memory", "16Gi"}}}})}}).dump());
  EXPECT_EQ(milli(d.pod_sets(0), "memory"), 16 * kGi * 1000);
  // A fractional GPU.
  d = host.demand(
      isvc({{"predictor", model_predictor({{"limits", {{"nvidia.com/gpu", "0.5"}}}})}}).dump());
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 500);
  // A MIG slice keeps its own resource name.
  d = host.demand(
      isvc({{"predictor", model_predictor({{"limits", {{"nvidia.com/mig-1g.10gb", "1"}}}})}})
          .dump());
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/mig-1g.10gb"), 1000);
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 0);
  // No resources at all: an empty per-pod list.
  d = host.demand(isvc({{"predictor", {{"sklearn", {{"storageUri", "gs://m"}}}}}}).dump());
  EXPECT_EQ(d.pod_sets(0).per_pod_size(), 0);
}

TEST(kserve_plugin_demand, ReplicaBoundsAreInt32) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto with = [](Json min, Json max) {
    Json p = model_predictor({{"limits", {{"nvidia.com/gpu", "1"}}}});
    if (!min.is_null()) p["minReplicas"] = min;
    if (!max.is_null()) p["maxReplicas"] = max;
    return isvc({{"predictor", p}});
  };
  auto d = host.demand(with(2147483647, nullptr).dump());
  EXPECT_EQ(d.pod_sets(0).count(), 2147483647);
  EXPECT_EQ(d.pod_sets(0).min_count(), 2147483647);

  std::string msg = failure(host, with(2147483648LL, nullptr), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/minReplicas"), 0u) << msg;
  msg = failure(host, with(Json(18446744073709551615ULL), nullptr), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/minReplicas"), 0u) << msg;
  msg = failure(host, with(-1, nullptr), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/minReplicas"), 0u) << msg;
  msg = failure(host, with("2", nullptr), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/minReplicas"), 0u) << msg;
  msg = failure(host, with(1.5, nullptr), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/minReplicas"), 0u) << msg;
  msg = failure(host, with(nullptr, 4294967296LL), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/maxReplicas"), 0u) << msg;
  msg = failure(host, with(3, 2), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/maxReplicas: 2 is below minReplicas 3"), 0u) << msg;
  // maxReplicas 0 means no upper bound.
  EXPECT_EQ(host.demand(with(3, 0).dump()).pod_sets(0).count(), 3);
}

// After scale-to-zero set minReplicas 0, demand still describes the service as its owner set it.
TEST(kserve_plugin_demand, CountsTheRecordedMinReplicas) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json p = model_predictor({{"limits", {{"nvidia.com/gpu", "1"}}}});
  p["minReplicas"] = 0;
  Json o =
      isvc({{"predictor", p}}, {{"gpuaas.io/scaled-from", R"({"/spec/predictor/minReplicas":4})"}});
  EXPECT_EQ(host.demand(o.dump()).pod_sets(0).count(), 4);
  o["metadata"]["annotations"]["gpuaas.io/scaled-from"] = R"({"/spec/predictor/minReplicas":null})";
  EXPECT_EQ(host.demand(o.dump()).pod_sets(0).min_count(), 1);
  o["metadata"]["annotations"]["gpuaas.io/scaled-from"] =
      R"({"/spec/predictor/minReplicas":2147483648})";
  std::string msg = failure(host, o, GPUAAS_RC_INVALID_INPUT);
  EXPECT_NE(msg.find("gpuaas.io~1scaled-from"), std::string::npos) << msg;
}

TEST(kserve_plugin_demand, MalformedObjectsNameThePlace) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  try {
    host.demand(R"({"apiVersion": )");
    ADD_FAILURE() << "malformed JSON accepted";
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STRNE(e.what(), "");
  }
  EXPECT_EQ(failure(host, isvc(Json::object()), GPUAAS_RC_INVALID_INPUT),
            "/spec/predictor: missing");
  EXPECT_EQ(failure(host, isvc({{"predictor", "x"}}), GPUAAS_RC_INVALID_INPUT),
            "/spec/predictor: not an object");
  EXPECT_EQ(failure(host, isvc({{"predictor", {{"minReplicas", 1}}}}), GPUAAS_RC_INVALID_INPUT)
                .find("/spec/predictor: no model server"),
            0u);
  EXPECT_EQ(
      failure(host, isvc({{"predictor", {{"containers", Json::array()}}}}), GPUAAS_RC_INVALID_INPUT)
          .find("/spec/predictor: no model server"),
      0u);
  EXPECT_EQ(failure(host, isvc({{"predictor", {{"containers", "x"}, {"model", Json::object()}}}}),
                    GPUAAS_RC_INVALID_INPUT),
            "/spec/predictor/containers: not a list");
  EXPECT_EQ(failure(host, isvc({{"predictor", {{"model", "m"}}}}), GPUAAS_RC_INVALID_INPUT),
            "/spec/predictor/model: not an object");
  EXPECT_EQ(
      failure(host, isvc({{"predictor", {{"model", Json::object()}, {"sklearn", Json::object()}}}}),
              GPUAAS_RC_INVALID_INPUT),
      "/spec/predictor: more than one model server (model, sklearn); KServe takes one");
  EXPECT_EQ(failure(host, isvc({{"predictor", {{"sklearn", Json::object()}}}, {"transformer", 3}}),
                    GPUAAS_RC_INVALID_INPUT),
            "/spec/transformer: not an object");
  // A bad quantity in the model spec is reported where it is written, not in the synthetic pod.
  std::string msg = failure(
      host, isvc({{"predictor", model_predictor({{"limits", {{"nvidia.com/gpu", "lots"}}}})}}),
      GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg.find("/spec/predictor/model/resources/limits/nvidia.com/gpu"), 0u) << msg;
  msg = failure(host, isvc({{"predictor", model_predictor("big")}}), GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg, "/spec/predictor/model/resources: not an object");
  // Custom containers keep their own index.
  msg = failure(
      host,
      isvc({{"predictor", {{"containers", {{{"name", "a"}}, {{"name", "b"}, {"resources", 1}}}}}}}),
      GPUAAS_RC_INVALID_INPUT);
  EXPECT_EQ(msg, "/spec/predictor/containers/1/resources: not an object");
  // Not an InferenceService.
  Json other = isvc({{"predictor", {{"sklearn", Json::object()}}}});
  other["kind"] = "Deployment";
  other["apiVersion"] = "apps/v1";
  EXPECT_NE(failure(host, other, GPUAAS_RC_INVALID_INPUT).find("apps/v1 Deployment"),
            std::string::npos);
}

TEST(kserve_plugin_demand, ModelMeshAndMultiNodeAreNotSupported) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json mm = isvc({{"predictor", model_predictor(Json::object())}},
                 {{"serving.kserve.io/deploymentMode", "ModelMesh"}});
  EXPECT_NE(failure(host, mm, GPUAAS_RC_NOT_SUPPORTED).find("ModelMesh"), std::string::npos);
  Json mn = isvc({{"predictor", model_predictor(Json::object())}});
  mn["spec"]["predictor"]["workerSpec"] = {{"pipelineParallelSize", 2}};
  EXPECT_NE(failure(host, mn, GPUAAS_RC_NOT_SUPPORTED).find("/spec/predictor/workerSpec"),
            std::string::npos);
  Json bad = isvc({{"predictor", model_predictor(Json::object())}},
                  {{"serving.kserve.io/deploymentMode", "Turbo"}});
  EXPECT_EQ(failure(host, bad, GPUAAS_RC_INVALID_INPUT)
                .find("/metadata/annotations/serving.kserve.io~1deploymentMode: unknown"),
            0u);
}

}  // namespace
