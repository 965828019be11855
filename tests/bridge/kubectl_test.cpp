// A real kubectl against the fake API server: discovery (api-resources), get and list in the API
// reference's shapes, create of published manifests whole, merge and JSON patches with their
// resourceVersion and error rules, `kubectl scale` through the /scale subresource, and a bounded
// `get -w` that prints a change made meanwhile. It proves the fake speaks the wire format a
// stock client expects, not only the one gpuaas-bridge uses. kubectl comes from PATH (or
// GPUAAS_KUBECTL); the test fails when there is none.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "fake_api_server.hpp"
#include "manifests.hpp"
#include "process.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// What the test's server serves. Two kueue versions: the first registered is preferred.
struct Kind {
  const char* api_version;
  const char* kind;
  const char* plural;
  bool namespaced;
  bool scale;
};
constexpr Kind kKinds[] = {
    {"v1", "Pod", "pods", true, false},
    {"v1", "Node", "nodes", false, false},
    {"v1", "Namespace", "namespaces", false, false},
    {"v1", "Event", "events", true, false},
    {"v1", "ConfigMap", "configmaps", true, false},
    {"apps/v1", "Deployment", "deployments", true, true},
    {"apps/v1", "StatefulSet", "statefulsets", true, true},
    {"batch/v1", "Job", "jobs", true, false},
    {"kueue.x-k8s.io/v1beta2", "ResourceFlavor", "resourceflavors", false, false},
    {"kueue.x-k8s.io/v1beta2", "ClusterQueue", "clusterqueues", false, false},
    {"kueue.x-k8s.io/v1beta2", "LocalQueue", "localqueues", true, false},
    {"kueue.x-k8s.io/v1beta1", "ClusterQueue", "clusterqueues", false, false},
    {"ray.io/v1", "RayCluster", "rayclusters", true, false},
    {"kubeflow.org/v1", "PyTorchJob", "pytorchjobs", true, false},
    {"serving.kserve.io/v1beta1", "InferenceService", "inferenceservices", true, false},
};

const Kind& FindKind(const std::string& api_version, const std::string& kind) {
  for (const auto& k : kKinds) {
    if (k.api_version == api_version && k.kind == kind) return k;
  }
  throw std::runtime_error("the test serves no " + api_version + " " + kind);
}

// kubectl's fully qualified resource, "rayclusters.v1.ray.io" or "pods": no guessing of versions.
std::string ResourceArg(const Kind& k) {
  const std::string av = k.api_version;
  const auto slash = av.find('/');
  if (slash == std::string::npos) return k.plural;
  return std::string(k.plural) + "." + av.substr(slash + 1) + "." + av.substr(0, slash);
}

std::string FindKubectl() {
  if (const char* env = std::getenv("GPUAAS_KUBECTL"); env != nullptr && *env != '\0') return env;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "kubectl";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One kubectl process, stdout and stderr in files. Every wait is bounded; a process still
// running when this goes is killed.
class Kubectl {
 public:
  Kubectl(const std::vector<std::string>& argv, const std::string& prefix)
      : out_(prefix + ".out"), err_(prefix + ".err") {
    // Everything allocated before the fork: the child of a threaded process may only exec.
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) std::_Exit(126);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execv(args[0], args.data());
      std::_Exit(127);
    }
  }
  ~Kubectl() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Kubectl(const Kubectl&) = delete;
  Kubectl& operator=(const Kubectl&) = delete;

  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
    pid_ = -1;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return false;
  }
  // The exit code, or -2 when it was still running after `bound` (then it is killed).
  int wait(std::chrono::milliseconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (running()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        code_ = -2;
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    return code_;
  }
  std::string out() const { return ReadFile(out_); }
  std::string err() const { return ReadFile(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  int code_ = -1;
};

struct Result {
  int code = -1;
  std::string out, err;
  std::string describe() const {
    return "exit " + std::to_string(code) + "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
  // kubectl failed with this in its error.
  bool failed_with(const std::string& text) const {
    return code != 0 && err.find(text) != std::string::npos;
  }
};

std::vector<std::string> Lines(const std::string& text) {
  std::stringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class KubectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubectl_ = FindKubectl();
    ASSERT_FALSE(kubectl_.empty())
        << "kubectl is not on PATH: install Debian's kubernetes-client (apt-get install "
           "kubernetes-client; tools/setup.sh does when no kubectl exists), or set "
           "GPUAAS_KUBECTL to a kubectl binary";
    api_ = FakeApiServer::start();
    for (const auto& k : kKinds) {
      api_->add_resource(k.api_version, k.kind, k.plural, k.namespaced, k.scale);
    }
    // kubectl looks the namespace up when an object is not found, to say which is missing.
    for (const char* ns : {"default", "team-a", "kubeflow", "gpuaas-system"}) {
      api_->put({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = gpuaas::testing::temp_dir(std::string("kubectl-") + info->name());
    kubeconfig_ = dir_ + "/kubeconfig";
    // No credentials: kubectl sends no bearer token over plain HTTP (kube_auth_test covers them).
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
                                  "clusters:\n- name: fake\n  cluster: {server: \""
                               << api_->url()
                               << "\"}\nusers:\n- name: u\n  user: {}\n"
                                  "contexts:\n- name: fake\n"
                                  "  context: {cluster: fake, user: u, namespace: default}\n";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Every call names the kubeconfig, a discovery cache of its own and a request timeout.
  std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> out = {kubectl_,      "--kubeconfig",  kubeconfig_,
                                    "--cache-dir", dir_ + "/cache", "--request-timeout=10s"};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  std::unique_ptr<Kubectl> start(const std::vector<std::string>& args) {
    return std::make_unique<Kubectl>(argv(args), dir_ + "/call" + std::to_string(++calls_));
  }
  Result run(const std::vector<std::string>& args, std::chrono::milliseconds bound = 30s) {
    auto child = start(args);
    Result r;
    r.code = child->wait(bound);
    r.out = child->out();
    r.err = child->err();
    return r;
  }
  // `kubectl get RESOURCE NAME -o json`; null (and a test failure) when it fails.
  json get(const std::string& resource, const std::string& name, const std::string& ns = "") {
    std::vector<std::string> args = {"get", resource, name, "-o", "json"};
    if (!ns.empty()) args.insert(args.end(), {"-n", ns});
    const Result r = run(args);
    EXPECT_EQ(r.code, 0) << r.describe();
    return r.code == 0 ? json::parse(r.out, nullptr, false) : json();
  }
  json raw(const std::string& path) {
    const Result r = run({"get", "--raw", path});
    EXPECT_EQ(r.code, 0) << r.describe();
    return json::parse(r.out, nullptr, false);
  }
  // The body of kubectl's create of this object.
  json Posted(const Kind& k, const std::string& name) const {
    for (const auto& r : api_->requests()) {
      if (r.method != "POST" || !r.path.ends_with(std::string("/") + k.plural)) continue;
      const json body = json::parse(r.body, nullptr, false);
      if (body.is_object() && body["metadata"].value("name", "") == name) return body;
    }
    ADD_FAILURE() << "kubectl created no " << k.kind << " " << name;
    return json();
  }
  static json pod(const std::string& name, const std::string& phase) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "team-a"}, {"labels", {{"app", "demo"}}}}},
            {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}},
            {"status", {{"phase", phase}}}};
  }

  std::string kubectl_, dir_, kubeconfig_;
  int calls_ = 0;
  std::unique_ptr<FakeApiServer> api_;
};

// What the API reference gives every object read back.
void ExpectObject(const json& o, const std::string& api_version, const std::string& kind,
                  const std::string& name, const std::string& ns) {
  ASSERT_TRUE(o.is_object()) << o;
  EXPECT_EQ(o.value("apiVersion", ""), api_version) << o;
  EXPECT_EQ(o.value("kind", ""), kind) << o;
  const json meta = o.value("metadata", json::object());
  EXPECT_EQ(meta.value("name", ""), name);
  if (ns.empty()) {
    EXPECT_FALSE(meta.contains("namespace")) << meta;
  } else {
    EXPECT_EQ(meta.value("namespace", ""), ns);
  }
  for (const char* key : {"uid", "resourceVersion", "creationTimestamp"}) {
    EXPECT_FALSE(meta.value(key, "").empty()) << key << " missing in " << meta;
  }
}

// The element of a discovery array with this name (null when none).
json Named(const json& items, const std::string& name) {
  for (const auto& item : items.is_array() ? items : json::array()) {
    if (item.value("name", "") == name) return item;
  }
  return json();
}

std::uint64_t Rv(const json& o) { return std::stoull(o["metadata"].value("resourceVersion", "0")); }

TEST_F(KubectlTest, DiscoveryListsEveryKindTheServerKnows) {
  const Result listed = run({"api-resources"});
  ASSERT_EQ(listed.code, 0) << listed.describe();
  // NAME SHORTNAMES APIVERSION NAMESPACED KIND, short names optional: look for the other four.
  for (const auto& k : kKinds) {
    if (std::string(k.api_version) == "kueue.x-k8s.io/v1beta1") continue;  // not preferred
    bool found = false;
    for (const auto& line : Lines(listed.out)) {
      std::stringstream words(line);
      std::vector<std::string> w;
      for (std::string word; words >> word;) w.push_back(word);
      if (w.size() < 4 || w.front() != k.plural || w.back() != k.kind) continue;
      found =
          w[w.size() - 3] == k.api_version && w[w.size() - 2] == (k.namespaced ? "true" : "false");
    }
    EXPECT_TRUE(found) << k.plural << " " << k.api_version << " missing in\n" << listed.out;
  }

  // The documents themselves, as the API reference shapes them.
  const json api = raw("/api");
  EXPECT_EQ(api.value("kind", ""), "APIVersions") << api;
  EXPECT_EQ(api["versions"], json({"v1"}));
  EXPECT_EQ(api["serverAddressByClientCIDRs"][0].value("clientCIDR", ""), "0.0.0.0/0");
  const json apis = raw("/apis");
  EXPECT_EQ(apis.value("kind", ""), "APIGroupList") << apis;
  const json kueue = Named(apis["groups"], "kueue.x-k8s.io");
  EXPECT_EQ(kueue["preferredVersion"]["groupVersion"], "kueue.x-k8s.io/v1beta2") << apis;
  EXPECT_EQ(kueue["versions"].size(), 2u) << apis;
  const json apps = raw("/apis/apps/v1");
  EXPECT_EQ(apps.value("kind", ""), "APIResourceList") << apps;
  EXPECT_EQ(apps.value("groupVersion", ""), "apps/v1");
  const json scale = Named(apps["resources"], "deployments/scale");
  EXPECT_EQ(scale.value("kind", ""), "Scale") << apps;
  EXPECT_EQ(scale.value("group", "") + "/" + scale.value("version", ""), "autoscaling/v1");
  const json core = raw("/api/v1");
  const json pods = Named(core["resources"], "pods");
  EXPECT_EQ(pods.value("singularName", ""), "pod") << core;
  EXPECT_EQ(pods.value("namespaced", false), true);
  EXPECT_NE(std::find(pods["verbs"].begin(), pods["verbs"].end(), "watch"), pods["verbs"].end());
  EXPECT_EQ(Named(core["resources"], "pods/status").value("kind", ""), "Pod") << core;

  const Result version = run({"version", "-o", "json"});
  EXPECT_EQ(json::parse(version.out, nullptr, false)["serverVersion"].value("gitVersion", ""),
            "v1.32.0")
      << version.describe();
  // No OpenAPI: kubectl must manage without it (--validate=false).
  const Result openapi = run({"get", "--raw", "/openapi/v2"});
  EXPECT_TRUE(openapi.failed_with("NotFound")) << openapi.describe();
}

TEST_F(KubectlTest, GetAndListAnswerInTheApiReferenceShapes) {
  api_->put(pod("trainer-0", "Running"));
  api_->put(pod("trainer-1", "Pending"));
  api_->put(json{{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", "gpu-node-1"}}},
                 {"status", {{"capacity", {{"nvidia.com/gpu", "8"}}}}}});

  const Result list = run({"get", "pods", "-n", "team-a", "-o", "json"});
  ASSERT_EQ(list.code, 0) << list.describe();
  const json pods = json::parse(list.out, nullptr, false);
  ASSERT_EQ(pods.value("kind", ""), "List") << list.out;  // kubectl's own wrapper
  ASSERT_EQ(pods["items"].size(), 2u) << list.out;
  // The list's kind (PodList) is what gives kubectl the items' kind and apiVersion.
  ExpectObject(pods["items"][0], "v1", "Pod", "trainer-0", "team-a");
  ExpectObject(pods["items"][1], "v1", "Pod", "trainer-1", "team-a");
  EXPECT_EQ(pods["items"][1]["status"]["phase"], "Pending");
  const json pod_list = raw("/api/v1/namespaces/team-a/pods");
  EXPECT_EQ(pod_list.value("kind", ""), "PodList") << pod_list;
  EXPECT_EQ(pod_list["metadata"].value("resourceVersion", ""), api_->resource_version());

  const Result nodes = run({"get", "nodes"});
  ASSERT_EQ(nodes.code, 0) << nodes.describe();
  EXPECT_EQ(nodes.out.rfind("NAME", 0), 0u) << nodes.out;
  EXPECT_NE(nodes.out.find("gpu-node-1"), std::string::npos) << nodes.out;
  ExpectObject(get("nodes", "gpu-node-1"), "v1", "Node", "gpu-node-1", "");

  const Result missing = run({"get", "pod", "nope", "-n", "team-a"});
  EXPECT_TRUE(missing.failed_with("(NotFound)")) << missing.describe();
  EXPECT_NE(missing.err.find("pods \"nope\" not found"), std::string::npos) << missing.describe();
}

// Published manifests, each file whole (several kinds in one file), created and read back.
TEST_F(KubectlTest, CreatesPublishedManifestsAndReadsThemBack) {
  const std::vector<std::string> files = {
      manifests_dir() + "/kueue/single-clusterqueue-setup.yaml",
      manifests_dir() + "/kuberay/ray-cluster.autoscaler.yaml",
      manifests_dir() + "/kubeflow-training/simple.yaml",
      manifests_dir() + "/kserve/kserve-isvc.yaml",
      std::string(GPUAAS_SOURCE_DIR) + "/deploy/kubernetes/gpuaasd.yaml"};
  std::vector<std::string> args = {"create", "--validate=false"};
  for (const auto& f : files) args.insert(args.end(), {"-f", f});
  const Result created = run(args);
  ASSERT_EQ(created.code, 0) << created.describe();

  const auto keys = [](const json& o) {
    std::vector<std::string> out;
    for (const auto& [key, value] : o.items()) out.push_back(key);
    return out;
  };
  int objects = 0;
  for (const auto& file : files) {
    for (const json& doc : load_manifests(file)) {
      ++objects;
      const Kind& k = FindKind(doc["apiVersion"], doc["kind"]);
      const std::string name = doc["metadata"]["name"];
      const std::string ns = k.namespaced ? doc["metadata"].value("namespace", "default") : "";
      EXPECT_NE(created.out.find(name + " created"), std::string::npos) << created.out;
      const json got = get(ResourceArg(k), name, ns);
      SCOPED_TRACE(file + ": " + k.kind + " " + name);
      ExpectObject(got, k.api_version, k.kind, name, ns);
      // The store keeps what kubectl sent, and that is the whole document. kubectl reads YAML
      // 1.1 (`defaultMode: 0777` is octal) and our loader YAML 1.2 (decimal): compare the
      // document's fields, the body's values with what kubectl sent.
      const json sent = Posted(k, name);
      for (const char* part : {"spec", "data"}) {
        if (!doc.contains(part)) continue;
        EXPECT_EQ(got.value(part, json()), sent.value(part, json())) << part;
        EXPECT_EQ(keys(got.value(part, json())), keys(doc[part])) << part;
      }
      EXPECT_EQ(got["metadata"].value("labels", json()), doc["metadata"].value("labels", json()));
    }
  }
  EXPECT_EQ(objects, 8);  // flavor, cluster and local queue, RayCluster, ConfigMap, 3 more

  const Result again = run({"create", "--validate=false", "-f", files[2]});
  EXPECT_TRUE(again.failed_with("(AlreadyExists)")) << again.describe();
}

TEST_F(KubectlTest, MergeAndJsonPatchesChangeTheObjectAndItsResourceVersion) {
  const std::string file = manifests_dir() + "/kuberay/ray-cluster.autoscaler.yaml";
  ASSERT_EQ(run({"create", "--validate=false", "-f", file, "-n", "team-a"}).code, 0);
  const std::string rc = "rayclusters.v1.ray.io";
  const std::string name = "raycluster-autoscaler";
  const json before = get(rc, name, "team-a");

  const Result merge = run({"patch", rc, name, "-n", "team-a", "--type", "merge", "-p",
                            R"({"metadata":{"labels":{"team":"a"}},"spec":{"suspend":true}})"});
  ASSERT_EQ(merge.code, 0) << merge.describe();
  EXPECT_NE(merge.out.find("patched"), std::string::npos) << merge.out;
  const json merged = get(rc, name, "team-a");
  EXPECT_EQ(merged["metadata"]["labels"].value("team", ""), "a") << merged["metadata"];
  EXPECT_EQ(merged["spec"].value("suspend", false), true);
  EXPECT_GT(Rv(merged), Rv(before));
  EXPECT_EQ(merged["metadata"].value("generation", 0), 2);  // a spec change

  const Result json_patch =
      run({"patch", rc, name, "-n", "team-a", "--type", "json", "-p",
           R"([{"op":"test","path":"/metadata/labels/team","value":"a"},)"
           R"({"op":"replace","path":"/metadata/labels/team","value":"b"},)"
           R"({"op":"add","path":"/metadata/labels/gpuaas.io~1patched","value":"json"},)"
           R"({"op":"remove","path":"/spec/suspend"}])"});
  ASSERT_EQ(json_patch.code, 0) << json_patch.describe();
  const json patched = get(rc, name, "team-a");
  EXPECT_EQ(patched["metadata"]["labels"].value("team", ""), "b");
  EXPECT_EQ(patched["metadata"]["labels"].value("gpuaas.io/patched", ""), "json");
  EXPECT_FALSE(patched["spec"].contains("suspend"));
  EXPECT_GT(Rv(patched), Rv(merged));

  // The API server's errors, as kubectl reports them from the Status bodies.
  const Result failed_test = run({"patch", rc, name, "-n", "team-a", "--type", "json", "-p",
                                  R"([{"op":"test","path":"/metadata/labels/team","value":"a"}])"});
  // 422 Invalid, which kubectl words as "The request is invalid: <message>".
  EXPECT_TRUE(failed_test.failed_with("is invalid")) << failed_test.describe();
  const Result bad_op = run({"patch", rc, name, "-n", "team-a", "--type", "json", "-p",
                             R"([{"op":"frobnicate","path":"/spec","value":1}])"});
  EXPECT_TRUE(bad_op.failed_with("is invalid")) << bad_op.describe();
  EXPECT_NE(bad_op.err.find("frobnicate"), std::string::npos) << bad_op.describe();
  const Result stale = run({"patch", rc, name, "-n", "team-a", "--type", "merge", "-p",
                            R"({"metadata":{"resourceVersion":")" + std::to_string(Rv(before)) +
                                R"("},"spec":{"suspend":false}})"});
  EXPECT_TRUE(stale.failed_with("(Conflict)")) << stale.describe();
  // Custom resources take no strategic merge patch (kubectl's default type): 415, which kubectl
  // reports as such rather than falling back.
  const Result strategic =
      run({"patch", rc, name, "-n", "team-a", "-p", R"({"metadata":{"labels":{"x":"y"}}})"});
  EXPECT_TRUE(strategic.failed_with("in an unknown format")) << strategic.describe();
  EXPECT_EQ(Rv(get(rc, name, "team-a")), Rv(patched));  // none of the failures changed it
}

TEST_F(KubectlTest, ScaleGoesThroughTheScaleSubresource) {
  const std::string file = std::string(GPUAAS_SOURCE_DIR) + "/deploy/kubernetes/gpuaasd.yaml";
  ASSERT_EQ(run({"create", "--validate=false", "-f", file}).code, 0);
  const json before = get("deployments.v1.apps", "gpuaasd", "gpuaas-system");
  ASSERT_EQ(before["spec"].value("replicas", 0), 2);

  const Result scaled =
      run({"scale", "deployment", "gpuaasd", "-n", "gpuaas-system", "--replicas=3"});
  ASSERT_EQ(scaled.code, 0) << scaled.describe();
  EXPECT_NE(scaled.out.find("scaled"), std::string::npos) << scaled.out;
  const json after = get("deployments.v1.apps", "gpuaasd", "gpuaas-system");
  EXPECT_EQ(after["spec"].value("replicas", 0), 3);
  EXPECT_GT(Rv(after), Rv(before));
  const auto requests = api_->requests();
  EXPECT_TRUE(std::any_of(requests.begin(), requests.end(), [](const auto& r) {
    return r.method != "GET" && r.path.ends_with("/deployments/gpuaasd/scale");
  }));

  const json scale = raw("/apis/apps/v1/namespaces/gpuaas-system/deployments/gpuaasd/scale");
  EXPECT_EQ(scale.value("kind", ""), "Scale") << scale;
  EXPECT_EQ(scale.value("apiVersion", ""), "autoscaling/v1");
  EXPECT_EQ(scale["spec"].value("replicas", 0), 3);
}

TEST_F(KubectlTest, WatchPrintsAChangeMadeMeanwhile) {
  api_->put(pod("worker-0", "Pending"));
  auto watch = start({"get", "pods", "-n", "team-a", "-w", "-o",
                      "custom-columns=NAME:.metadata.name,PHASE:.status.phase"});
  // kubectl lists, prints, then watches from the list's resourceVersion.
  ASSERT_TRUE(gpuaas::testing::eventually(
      [&] { return api_->open_watches() >= 1 || !watch->running(); }, 20s));
  ASSERT_EQ(api_->open_watches(), 1) << watch->out() << watch->err();
  api_->put(pod("worker-0", "Running"));
  api_->put(pod("worker-1", "Pending"));
  const bool printed = gpuaas::testing::eventually(
      [&] {
        const std::string out = watch->out();
        return out.find("Running") != std::string::npos &&
               out.find("worker-1") != std::string::npos;
      },
      15s);
  api_->close_watches();  // a watch the server ends ends `kubectl get -w`
  const int code = watch->wait(15s);
  const std::string out = watch->out();
  EXPECT_TRUE(printed) << out << watch->err();
  EXPECT_EQ(code, 0) << "kubectl get -w did not end with its watch\n" << out << watch->err();
  const auto rows = Lines(out);
  ASSERT_GE(rows.size(), 4u) << out;
  EXPECT_EQ(rows[0].rfind("NAME", 0), 0u) << out;
  EXPECT_NE(rows[1].find("Pending"), std::string::npos) << out;  // the list, then the changes
  EXPECT_NE(rows[2].find("Running"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpuaas::bridge
