#include "gpuaas/core/object_decoder.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/quantity.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int64_t kTi = int64_t{1} << 40;

// ---------------------------------------------------------------------------------------------
// YAML -> JSON, the way kubectl would send a manifest: quoted and block scalars are strings, plain
// scalars are resolved with the YAML 1.2 core schema (null, bool, int, float, else string).

json plain_scalar(const std::string& s) {
  static const std::regex kBool("true|True|TRUE|false|False|FALSE");
  static const std::regex kDecimal("[-+]?[0-9]+");
  static const std::regex kOctal("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  static const std::regex kSpecialFloat(R"([-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN)");
  if (std::regex_match(s, kBool)) return s[0] == 't' || s[0] == 'T';
  auto integer = [&](std::string_view digits, int base) -> json {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
    if (ec == std::errc() && p == digits.data() + digits.size()) return v;
    return std::stod(s);  // out of int64 range: a float, as JSON readers would take it
  };
  if (std::regex_match(s, kDecimal)) return integer(s[0] == '+' ? s.substr(1) : s, 10);
  if (std::regex_match(s, kOctal)) return integer(std::string_view(s).substr(2), 8);
  if (std::regex_match(s, kHex)) return integer(std::string_view(s).substr(2), 16);
  if (std::regex_match(s, kFloat)) return std::stod(s);
  if (std::regex_match(s, kSpecialFloat)) return nullptr;  // no JSON form
  return s;
}

json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // "?" is yaml-cpp's tag for a plain scalar; "!" for quoted and block scalars.
      if (n.Tag() == "?") return plain_scalar(n.Scalar());
      return n.Scalar();
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(yaml_to_json(item));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.Scalar()] = yaml_to_json(kv.second);
      return o;
    }
  }
  return nullptr;
}

std::string manifests_dir() { return gpuaas::testing::shared_dir() + "/manifests"; }

// Every YAML document of every manifest under shared/manifests, as JSON, with where it came from.
struct Manifest {
  std::string origin;  // file#index
  json doc;
};

std::vector<Manifest> all_manifests() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(manifests_dir())) {
    auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Manifest> out;
  for (const auto& f : files) {
    auto docs = YAML::LoadAllFromFile(f);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (docs[i].IsNull()) continue;  // an empty document after a trailing "---"
      out.push_back({f + "#" + std::to_string(i), yaml_to_json(docs[i])});
    }
  }
  return out;
}

json load_one(const std::string& relative) {
  auto docs = YAML::LoadAllFromFile(manifests_dir() + "/" + relative);
  EXPECT_FALSE(docs.empty()) << relative;
  return docs.empty() ? json() : yaml_to_json(docs[0]);
}

// A Pod made from a workload's real Pod template: what its controller would create.
std::string pod_from_template(const json& template_spec, const std::string& name) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", template_spec}};
  return pod.dump();
}

bool is_utf8(std::string_view s) {
  try {
    (void)json(std::string(s)).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

KubeObject decode_ok(const std::string& text) {
  ObjectDecoder d;
  auto r = d.decode(text);
  EXPECT_TRUE(r.is_ok()) << r.status().message() << "\n" << text.substr(0, 300);
  return r.is_ok() ? std::move(r.value()) : KubeObject{};
}

std::string decode_error(const std::string& text) {
  ObjectDecoder d;
  auto r = d.decode(text);
  EXPECT_FALSE(r.is_ok()) << text.substr(0, 300);
  if (r.is_ok()) return {};
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  return r.status().message();
}

// ---------------------------------------------------------------------------------------------
// The converter itself (so that a decoder failure below is the decoder's).

TEST(YamlToJsonTest, CoreSchemaScalars) {
  auto j = yaml_to_json(YAML::Load(
      "a: 1\nb: \"1\"\nc: true\nd: 'false'\ne: ~\nf: null\ng: 1.5\nh: 0x1F\ni: 0o17\nj: +7\n"
      "k: 1Gi\nl: yes\nm: \"\"\nn:\no: |\n  text\np: [1, \"2\"]\nq: -3\nr: 1e3\n"));
  EXPECT_EQ(j["a"], 1);
  EXPECT_EQ(j["b"], "1");
  EXPECT_EQ(j["c"], true);
  EXPECT_EQ(j["d"], "false");
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_TRUE(j["f"].is_null());
  EXPECT_EQ(j["g"], 1.5);
  EXPECT_EQ(j["h"], 31);
  EXPECT_EQ(j["i"], 15);
  EXPECT_EQ(j["j"], 7);
  EXPECT_EQ(j["k"], "1Gi");
  EXPECT_EQ(j["l"], "yes");  // YAML 1.1's boolean, a string in 1.2
  EXPECT_EQ(j["m"], "");
  EXPECT_TRUE(j["n"].is_null());
  EXPECT_EQ(j["o"], "text\n");
  EXPECT_EQ(j["p"], json::array({1, "2"}));
  EXPECT_EQ(j["q"], -3);
  EXPECT_EQ(j["r"], 1000.0);
}

// ---------------------------------------------------------------------------------------------
// Every real manifest

TEST(ObjectDecoderTest, DecodesEveryRealManifest) {
  auto manifests = all_manifests();
  ASSERT_GE(manifests.size(), 50u) << "shared/manifests not found under " << manifests_dir();
  std::set<std::string> kinds;
  int decoded = 0;
  int unnamed = 0;
  ObjectDecoder decoder;  // one decoder for all, as the intake reuses it
  for (const auto& m : manifests) {
    SCOPED_TRACE(m.origin);
    const json& doc = m.doc;
    ASSERT_TRUE(doc.is_object());
    const json& meta = doc["metadata"];
    std::string text = doc.dump();
    auto r = decoder.decode(text);
    if (!meta.contains("name")) {
      // generateName manifests: the API server names them, so an event never lacks a name.
      ASSERT_TRUE(meta.contains("generateName"));
      ASSERT_FALSE(r.is_ok());
      EXPECT_EQ(r.status().message(), "metadata.name: missing");
      ++unnamed;
      continue;
    }
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    const KubeObject& obj = *r;
    EXPECT_EQ(obj.meta.api_version, doc["apiVersion"].get<std::string>());
    EXPECT_EQ(obj.meta.kind, doc["kind"].get<std::string>());
    EXPECT_EQ(obj.meta.name, meta["name"].get<std::string>());
    EXPECT_EQ(obj.meta.namespace_, meta.value("namespace", ""));
    EXPECT_EQ(obj.meta.uid, "");
    EXPECT_FALSE(obj.meta.deleting);
    EXPECT_FALSE(obj.meta.controller.has_value());
    // Copies: iterating items() of a temporary would dangle.
    const json label_doc = meta.value("labels", json::object());
    const json annotation_doc = meta.value("annotations", json::object());
    Labels labels;
    for (const auto& [k, v] : label_doc.items()) labels[k] = v.get<std::string>();
    EXPECT_EQ(obj.meta.labels, labels);
    if (obj.meta.kind != "Node") {
      Labels annotations;
      for (const auto& [k, v] : annotation_doc.items()) annotations[k] = v.get<std::string>();
      EXPECT_EQ(obj.meta.annotations, annotations);
    }
    EXPECT_EQ(obj.node.has_value(), obj.meta.kind == "Node");
    EXPECT_FALSE(obj.pod.has_value());
    EXPECT_EQ(obj.json, text);
    kinds.insert(obj.meta.kind);
    ++decoded;
  }
  EXPECT_GE(unnamed, 3);  // kueue/sample-job.yaml and two kuberay RayJobs
  EXPECT_GE(decoded, 50);
  for (const char* kind :
       {"ClusterQueue", "ClusterTrainingRuntime", "Cohort", "ConfigMap", "InferenceService",
        "LLMInferenceService", "LocalQueue", "MPIJob", "Node", "Notebook", "PyTorchJob",
        "RayCluster", "RayJob", "ResourceFlavor", "TFJob", "Topology", "TrainJob",
        "WorkloadPriorityClass"}) {
    EXPECT_EQ(kinds.count(kind), 1u) << kind;
  }
}

TEST(ObjectDecoderTest, RealManifestSpotChecks) {
  auto simple = decode_ok(load_one("kubeflow-training/simple.yaml").dump());
  EXPECT_EQ(simple.meta.api_version, "kubeflow.org/v1");
  EXPECT_EQ(simple.meta.kind, "PyTorchJob");
  EXPECT_EQ(simple.meta.namespace_, "kubeflow");
  EXPECT_EQ(simple.meta.name, "pytorch-simple");

  auto queues = YAML::LoadAllFromFile(manifests_dir() + "/kueue/single-clusterqueue-setup.yaml");
  ASSERT_EQ(queues.size(), 3u);
  auto local = decode_ok(yaml_to_json(queues[2]).dump());
  EXPECT_EQ(local.meta.kind, "LocalQueue");
  EXPECT_EQ(local.meta.namespace_, "default");
  EXPECT_EQ(local.meta.name, "user-queue");
  auto cluster = decode_ok(yaml_to_json(queues[1]).dump());
  EXPECT_EQ(cluster.meta.kind, "ClusterQueue");
  EXPECT_EQ(cluster.meta.namespace_, "");  // cluster-scoped
}

// ---------------------------------------------------------------------------------------------
// Node scale-in reads cluster-autoscaler's and Cluster API's annotations on Nodes; the rest of a
// Node's annotations (often large) are not stored.
TEST(ObjectDecoderTest, NodeKeepsTheAnnotationsScaleInReads) {
  auto node = decode_ok(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1",
    "annotations":{"cluster-autoscaler.kubernetes.io/scale-down-disabled":"true",
      "cluster.x-k8s.io/machine":"md-0-abcde","gpuaas.io/scale-in":"scalein/drain",
      "node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}},
    "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  EXPECT_EQ(node.meta.annotations,
            (Labels{{"cluster-autoscaler.kubernetes.io/scale-down-disabled", "true"},
                    {"cluster.x-k8s.io/machine", "md-0-abcde"},
                    {"gpuaas.io/scale-in", "scalein/drain"}}));
}

// The real Node

TEST(ObjectDecoderTest, RealGpuNode) {
  json doc = load_one("gpu-node/virtual-gpu-node.yaml");
  auto node = decode_ok(doc.dump());
  EXPECT_EQ(node.meta.api_version, "v1");
  EXPECT_EQ(node.meta.kind, "Node");
  EXPECT_EQ(node.meta.name, "virtual-gpu-node");
  EXPECT_EQ(node.meta.namespace_, "");
  EXPECT_EQ(node.meta.labels.size(), 16u);
  EXPECT_EQ(node.meta.labels.find("kubernetes.io/hostname")->second, "virtual-dgxa100.40g-0");
  EXPECT_EQ(node.meta.labels.find("node-role.kubernetes.io/agent")->second, "");
  EXPECT_EQ(node.meta.labels.find("gpu_affinity_capable")->second, "true");
  // Of a Node's annotations only those scale-in reads are kept; this node has none of them.
  EXPECT_TRUE(node.meta.annotations.empty());
  EXPECT_FALSE(node.pod.has_value());
  ASSERT_TRUE(node.node.has_value());
  const NodeStatus& n = *node.node;
  for (const ResourceList* list : {&n.capacity, &n.allocatable}) {
    EXPECT_EQ(list->size(), 15u);
    EXPECT_EQ(list->find(kGpuResource)->second, 8000);
    EXPECT_EQ(list->find("cpu")->second, 256'000);
    EXPECT_EQ(list->find("memory")->second, kTi * 1000);
    EXPECT_EQ(list->find("memory")->second, parse_quantity_milli("1Ti"));
    EXPECT_EQ(list->find("ephemeral-storage")->second, 15 * kTi * 1000);
    EXPECT_EQ(list->find("pods")->second, 110'000);
    EXPECT_EQ(list->find("hugepages-1Gi")->second, 0);
    EXPECT_EQ(list->find("intel.com/mlnx_sriov_rdma8")->second, 1000);
  }
  // Ready is read from the "Ready" condition, not from the others (many of them "True" or
  // "False" with other meanings).
  EXPECT_TRUE(n.ready);
  EXPECT_FALSE(n.unschedulable);
  ASSERT_EQ(n.taints.size(), 1u);
  EXPECT_EQ(n.taints[0].key, "kwok.x-k8s.io/node");
  EXPECT_EQ(n.taints[0].value, "fake");
  EXPECT_EQ(n.taints[0].effect, "NoSchedule");
}

TEST(ObjectDecoderTest, RealGpuNodeVariants) {
  json doc = load_one("gpu-node/virtual-gpu-node.yaml");
  // Not ready: the Ready condition says so.
  json not_ready = doc;
  for (auto& c : not_ready["status"]["conditions"]) {
    if (c["type"] == "Ready") c["status"] = "False";
  }
  EXPECT_FALSE(decode_ok(not_ready.dump()).node->ready);
  // Unknown is not ready either; no conditions at all is not ready.
  json unknown = doc;
  for (auto& c : unknown["status"]["conditions"]) {
    if (c["type"] == "Ready") c["status"] = "Unknown";
  }
  EXPECT_FALSE(decode_ok(unknown.dump()).node->ready);
  json no_conditions = doc;
  no_conditions["status"].erase("conditions");
  EXPECT_FALSE(decode_ok(no_conditions.dump()).node->ready);
  // Cordoned.
  json cordoned = doc;
  cordoned["spec"]["unschedulable"] = true;
  auto c = decode_ok(cordoned.dump());
  EXPECT_TRUE(c.node->unschedulable);
  EXPECT_EQ(c.node->taints.size(), 1u);
  // No status at all: a Node with nothing to offer.
  json bare = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n"}}}};
  auto b = decode_ok(bare.dump());
  ASSERT_TRUE(b.node.has_value());
  EXPECT_TRUE(b.node->capacity.empty());
  EXPECT_FALSE(b.node->ready);
}

TEST(ObjectDecoderTest, RealGpuNodeWithBadQuantityNamesThePath) {
  json doc = load_one("gpu-node/virtual-gpu-node.yaml");
  doc["status"]["capacity"]["cpu"] = "lots";
  EXPECT_EQ(decode_error(doc.dump()), "status.capacity.cpu: \"lots\" is not a quantity");
  doc = load_one("gpu-node/virtual-gpu-node.yaml");
  doc["status"]["allocatable"][kGpuResource] = "8 GPUs";
  EXPECT_EQ(decode_error(doc.dump()),
            "status.allocatable.nvidia.com/gpu: \"8 GPUs\" is not a quantity");
  doc = load_one("gpu-node/virtual-gpu-node.yaml");
  doc["status"]["capacity"] = "everything";
  EXPECT_EQ(decode_error(doc.dump()), "status.capacity: not an object");
}

TEST(ObjectDecoderTest, RealGpuNodeFormsAGpuPool) {
  ClusterModel model;
  auto node = decode_ok(load_one("gpu-node/virtual-gpu-node.yaml").dump());
  ASSERT_EQ(model.apply(wire::ChangeType::kAdded, std::move(node), wire::from_unix_ms(1000)),
            ApplyOutcome::kApplied);
  auto pools = model.gpu_pools();
  ASSERT_EQ(pools.size(), 1u);
  // The sample has no GPU feature-discovery labels.
  const GpuPool& p = pools.at("unknown");
  EXPECT_EQ(p.nodes, 1);
  EXPECT_EQ(p.ready_nodes, 1);
  EXPECT_EQ(p.capacity_milli, 8000);
  EXPECT_EQ(p.allocatable_milli, 8000);
  EXPECT_EQ(p.requested_milli, 0);
}

// ---------------------------------------------------------------------------------------------
// Pods from real templates

TEST(ObjectDecoderTest, PodFromRealTemplateLimitsOnlyBareNumber) {
  // `nvidia.com/gpu: 1` in limits only: a bare YAML number, and requests default to limits.
  json job = load_one("kubeflow-training/pytorch_job_mnist_nccl.yaml");
  const json& spec = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"];
  ASSERT_TRUE(spec["containers"][0]["resources"]["limits"][kGpuResource].is_number());
  auto pod = decode_ok(pod_from_template(spec, "pytorch-dist-mnist-nccl-worker-0"));
  ASSERT_TRUE(pod.pod.has_value());
  EXPECT_EQ(pod.pod->requests, (ResourceList{{kGpuResource, 1000}}));
  EXPECT_EQ(pod.pod->phase, "Pending");
  EXPECT_EQ(pod.pod->node_name, "");
  EXPECT_FALSE(pod.pod->gated);
  EXPECT_FALSE(pod.node.has_value());
}

TEST(ObjectDecoderTest, PodFromRealTemplateRequestsBeatLimits) {
  json svc = load_one("kserve/llm-inference-service-qwen2-7b-gpu.yaml");
  auto pod = decode_ok(pod_from_template(svc["spec"]["template"], "qwen-0"));
  // limits cpu '4', memory 32Gi; requests cpu '2', memory 16Gi: the requests count.
  EXPECT_EQ(
      pod.pod->requests,
      (ResourceList{{"cpu", 2000}, {"memory", (int64_t{16} << 30) * 1000}, {kGpuResource, 1000}}));

  json ray = load_one("kuberay/ray-job.batch-inference.yaml");
  auto head = decode_ok(pod_from_template(
      ray["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"], "ray-head"));
  EXPECT_EQ(head.pod->requests,
            (ResourceList{
                {"cpu", 54'000}, {"memory", (int64_t{54} << 30) * 1000}, {kGpuResource, 4000}}));
}

// ---------------------------------------------------------------------------------------------
// Pods: the effective request

TEST(ObjectDecoderTest, PodEffectiveRequest) {
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "team-a", "uid": "u-1", "resourceVersion": "42",
                 "labels": {"app": "train"},
                 "annotations": {"big": "ignored",
                                 "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}},
    "spec": {
      "nodeName": "gpu-1",
      "containers": [
        {"name": "main", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                       "limits": {"cpu": "1", "nvidia.com/gpu": "2"}}},
        {"name": "sidecar", "resources": {"limits": {"cpu": "250m"}}},
        {"name": "no-resources"}
      ],
      "initContainers": [
        {"name": "fetch", "resources": {"requests": {"cpu": "2", "memory": "512Mi",
                                                     "example.com/foo": "3"}}},
        {"name": "check", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
      ],
      "overhead": {"cpu": "100m", "memory": "64Mi"}
    },
    "status": {"phase": "Running"}
  })");
  auto obj = decode_ok(pod.dump());
  EXPECT_EQ(obj.meta.uid, "u-1");
  EXPECT_EQ(obj.meta.resource_version, "42");
  EXPECT_EQ(obj.meta.labels, (Labels{{"app", "train"}}));
  // Of a Pod's annotations only those scale-in reads are kept.
  EXPECT_EQ(obj.meta.annotations,
            (Labels{{"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}}));
  ASSERT_TRUE(obj.pod.has_value());
  EXPECT_EQ(obj.pod->node_name, "gpu-1");
  EXPECT_EQ(obj.pod->phase, "Running");
  // cpu: containers 500m + 250m = 750m < init 2 -> 2, plus 100m overhead.
  // memory: containers 1Gi > init 512Mi -> 1Gi, plus 64Mi overhead.
  // nvidia.com/gpu: containers 2 (from limits) > init 1.
  // example.com/foo: only an init container asks for it.
  EXPECT_EQ(obj.pod->requests, (ResourceList{{"cpu", 2100},
                                             {"example.com/foo", 3000},
                                             {"memory", (int64_t{1088} << 20) * 1000},
                                             {kGpuResource, 2000}}));
}

TEST(ObjectDecoderTest, PodWithoutSpecOrStatus) {
  auto obj = decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})");
  ASSERT_TRUE(obj.pod.has_value());
  EXPECT_TRUE(obj.pod->requests.empty());
  EXPECT_EQ(obj.pod->phase, "Pending");
  EXPECT_EQ(obj.meta.namespace_, "");
}

TEST(ObjectDecoderTest, PodSchedulingGatesAndPhase) {
  auto gated = decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"schedulingGates":[{"name":"kueue.x-k8s.io/admission"}],"containers":[]},
      "status":{"phase":"Pending"}})");
  EXPECT_TRUE(gated.pod->gated);
  auto ungated = decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"schedulingGates":[]},"status":{"phase":"Succeeded"}})");
  EXPECT_FALSE(ungated.pod->gated);
  EXPECT_EQ(ungated.pod->phase, "Succeeded");
}

TEST(ObjectDecoderTest, OnlyCoreV1NodeAndPodAreSchedulerKinds) {
  // A CRD that happens to be called Pod is a workload object.
  auto crd = decode_ok(R"({"apiVersion":"example.com/v1","kind":"Pod","metadata":{"name":"p",
      "annotations":{"a":"b"}},"spec":{"containers":[{"resources":{"requests":{"cpu":"x"}}}]}})");
  EXPECT_FALSE(crd.pod.has_value());
  EXPECT_FALSE(crd.node.has_value());
  EXPECT_EQ(crd.meta.annotations, (Labels{{"a", "b"}}));
}

TEST(ObjectDecoderTest, BareNumberQuantities) {
  auto obj = decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"resources":{"requests":{"cpu":0.5,"nvidia.com/gpu":1,
      "memory":1073741824}}}]}})");
  EXPECT_EQ(
      obj.pod->requests,
      (ResourceList{{"cpu", 500}, {"memory", (int64_t{1} << 30) * 1000}, {kGpuResource, 1000}}));
}

TEST(ObjectDecoderTest, BadPodQuantitiesNameThePath) {
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{},{"resources":{"requests":{"cpu":"lots"}}}]}})"),
            "spec.containers[1].resources.requests.cpu: \"lots\" is not a quantity");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"initContainers":[{"resources":{"limits":{"nvidia.com/gpu":"1x"}}}]}})"),
            "spec.initContainers[0].resources.limits.nvidia.com/gpu: \"1x\" is not a quantity");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"overhead":{"memory":"1.2.3"}}})"),
            "spec.overhead.memory: \"1.2.3\" is not a quantity");
  // Bare numbers must be non-negative; other JSON types are not quantities.
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"resources":{"requests":{"cpu":-1}}}]}})"),
            "spec.containers[0].resources.requests.cpu: -1 is negative");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"resources":{"requests":{"cpu":true}}}]}})"),
            "spec.containers[0].resources.requests.cpu: not a quantity");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"resources":{"requests":["1"]}}]}})"),
            "spec.containers[0].resources.requests: not an object");
}

TEST(ObjectDecoderTest, BadQuantityMessageStaysUtf8) {
  // The message quotes at most 40 bytes; cutting inside "é" would make it invalid UTF-8, and a
  // dead letter carrying it could not be decoded.
  std::string junk = "1";
  for (int i = 0; i < 30; ++i) junk += "\xC3\xA9";
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec", {{"containers", {{{"resources", {{"requests", {{"cpu", junk}}}}}}}}}}};
  std::string message = decode_error(pod.dump());
  EXPECT_TRUE(is_utf8(message)) << message;
  EXPECT_NE(message.find("\"1\xC3\xA9"), std::string::npos) << message;
  EXPECT_LE(message.size(), std::string("spec.containers[0].resources.requests.cpu: \"").size() +
                                40 + std::string("\" is not a quantity").size());
}

// ---------------------------------------------------------------------------------------------
// Metadata

TEST(ObjectDecoderTest, ControllerOwnerReference) {
  auto obj = decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"nb-0",
      "namespace":"ds","ownerReferences":[
        {"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u-cm"},
        {"apiVersion":"apps/v1","kind":"StatefulSet","name":"nb","uid":"u-sts",
         "controller":true,"blockOwnerDeletion":true},
        {"apiVersion":"v1","kind":"Secret","name":"s","uid":"u-s","controller":false}]}})");
  ASSERT_TRUE(obj.meta.controller.has_value());
  EXPECT_EQ(obj.meta.controller->api_version, "apps/v1");
  EXPECT_EQ(obj.meta.controller->kind, "StatefulSet");
  EXPECT_EQ(obj.meta.controller->name, "nb");
  EXPECT_EQ(obj.meta.controller->uid, "u-sts");

  auto no_controller = decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u",
      "controller":false}]}})");
  EXPECT_FALSE(no_controller.meta.controller.has_value());
}

TEST(ObjectDecoderTest, DeletionTimestamp) {
  EXPECT_TRUE(decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "deletionTimestamp":"2026-01-01T00:00:00Z","deletionGracePeriodSeconds":30}})")
                  .meta.deleting);
  EXPECT_FALSE(decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "deletionTimestamp":null}})")
                   .meta.deleting);
  EXPECT_FALSE(
      decode_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})").meta.deleting);
}

TEST(ObjectDecoderTest, NullLabelsAndAnnotationsAreEmpty) {
  auto obj = decode_ok(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
      "metadata":{"name":"q","labels":null,"annotations":null}})");
  EXPECT_TRUE(obj.meta.labels.empty());
  EXPECT_TRUE(obj.meta.annotations.empty());
}

TEST(ObjectDecoderTest, Errors) {
  EXPECT_EQ(decode_error("").substr(0, 26), "object is not valid JSON: ");
  EXPECT_EQ(decode_error("{").substr(0, 26), "object is not valid JSON: ");
  EXPECT_EQ(decode_error("not json").substr(0, 26), "object is not valid JSON: ");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1",})").substr(0, 26), "object is not valid JSON: ");
  EXPECT_EQ(decode_error("[1,2]"), "object is not a JSON object");
  EXPECT_EQ(decode_error("42"), "object is not a JSON object");
  EXPECT_EQ(decode_error("\"Pod\""), "object is not a JSON object");
  EXPECT_EQ(decode_error(R"({"kind":"Pod","metadata":{"name":"p"}})"), "apiVersion: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"","kind":"Pod","metadata":{"name":"p"}})"),
            "apiVersion: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":1,"kind":"Pod","metadata":{"name":"p"}})"),
            "apiVersion: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","metadata":{"name":"p"}})"), "kind: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod"})"), "metadata: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":"p"})"),
            "metadata: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{}})"),
            "metadata.name: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":""}})"),
            "metadata.name: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":7}})"),
            "metadata.name: missing");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":{"ok":"yes","replicas":3}}})"),
            "metadata.labels.replicas: not a string");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":{"enabled":true}}})"),
            "metadata.labels.enabled: not a string");
  EXPECT_EQ(decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":["a"]}})"),
            "metadata.labels: not an object");
  EXPECT_EQ(decode_error(R"({"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"p",
      "annotations":{"n":1}}})"),
            "metadata.annotations.n: not a string");
}

TEST(ObjectDecoderTest, ReusedDecoderForgetsThePreviousObject) {
  ObjectDecoder d;
  json big = load_one("gpu-node/virtual-gpu-node.yaml");
  ASSERT_TRUE(d.decode(big.dump()).is_ok());
  // A shorter input after a longer one: nothing of the first may show through.
  auto small = d.decode(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})");
  ASSERT_TRUE(small.is_ok());
  EXPECT_EQ(small->meta.kind, "Pod");
  EXPECT_TRUE(small->meta.labels.empty());
  EXPECT_FALSE(d.decode(R"({"apiVersion":"v1")").is_ok());
  auto again = d.decode(big.dump());
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->node->capacity.find(kGpuResource)->second, 8000);
}

// ---------------------------------------------------------------------------------------------
// stable_uid

TEST(StableUidTest, DeterministicAndDistinct) {
  EXPECT_EQ(stable_uid("Pod", "ns", "p"), stable_uid("Pod", "ns", "p"));
  std::set<std::string> uids = {
      stable_uid("Pod", "ns", "p"), stable_uid("Job", "ns", "p"), stable_uid("Pod", "other", "p"),
      stable_uid("Pod", "ns", "q"), stable_uid("Pod", "", "p"),   stable_uid("Node", "", "p"),
      stable_uid("a", "bc", "d"),   stable_uid("a", "b", "cd"),   stable_uid("ab", "c", "d"),
  };
  EXPECT_EQ(uids.size(), 9u);
}

TEST(StableUidTest, UuidTextForm) {
  // Version 8 (custom) with the RFC 4122 variant, lower-case hex, as Kubernetes prints uids.
  static const std::regex kUuid(
      "[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  using Identity = std::tuple<std::string, std::string, std::string>;
  for (const auto& [kind, ns, name] :
       std::vector<Identity>{{"Pod", "default", "p"},
                             {"Node", "", "virtual-gpu-node"},
                             {"", "", ""},
                             {"RayJob", "team-a", std::string(300, 'x')}}) {
    std::string uid = stable_uid(kind, ns, name);
    EXPECT_EQ(uid.size(), 36u);
    EXPECT_TRUE(std::regex_match(uid, kUuid)) << uid;
  }
}

TEST(StableUidTest, KnownValueDoesNotDrift) {
  // Hand-written objects are published with this uid by gpuaasctl and applied by gpuaasd, which
  // may be different builds: the value itself is part of the contract.
  EXPECT_EQ(stable_uid("Pod", "default", "p"), "77871674-8b92-8edd-8e50-f3fc770ebe6a");
  EXPECT_EQ(stable_uid("Node", "", "virtual-gpu-node"), "464209df-a59f-89b0-a441-d1004ae216f9");
}

}  // namespace
}  // namespace gpuaas::core
