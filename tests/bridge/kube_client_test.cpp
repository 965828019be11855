// KubeClient against the in-process fake API server over real HTTP: verbs, Status bodies, the
// bearer token (and its rotation through the token file), streaming, stop(), transport errors,
// and HTTPS verified against a CA made here with the openssl CLI.
#include "gpuaas/bridge/kube_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
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

TEST_F(KubeClientTest, ConcurrentRequestsFromManyThreadsAndTheLatencyHook) {
  KubeClient c = client();
  std::mutex mutex;
  std::map<std::string, int> by_verb;
  c.on_request([&](const std::string& method, long status, double seconds) {
    std::lock_guard lock(mutex);
    if (status == 200 && seconds >= 0) ++by_verb[method];
  });
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) ok += c.request("GET", "/api/v1/nodes").ok() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(by_verb["GET"], 40);
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

// HTTPS: the fake server gets a certificate made here with the openssl CLI; the client must
// verify it against the cluster CA (file or PEM data) and may present a client certificate.
// civetweb 1.15 with OpenSSL 3 needs the shim of docs/bridge-webhook.md, built here as it says.
class KubeClientTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/gpuaas-kube-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    const auto run = [](const std::string& cmd) { return std::system(cmd.c_str()) == 0; };
    const std::string req =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 ";
    ASSERT_TRUE(run(req + "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
                    dir_ + "/server.key -out " + dir_ + "/server.crt >" + dir_ +
                    "/openssl.log 2>&1"));
    ASSERT_TRUE(run(req + "-subj /CN=gpuaas-bridge -keyout " + dir_ + "/client.key -out " + dir_ +
                    "/client.crt >>" + dir_ + "/openssl.log 2>&1"));
    ASSERT_TRUE(
        run("cat " + dir_ + "/server.key " + dir_ + "/server.crt >" + dir_ + "/server.pem"));
    std::ofstream(dir_ + "/shim.c") << "#include <openssl/ssl.h>\n#undef SSL_get_peer_certificate\n"
                                       "X509* SSL_get_peer_certificate(const SSL* s) { return "
                                       "SSL_get1_peer_certificate(s); }\n";
    shim_built_ = run("cc -shared -fPIC -Wl,-soname,libssl.so -o " + dir_ + "/libshim.so " + dir_ +
                      "/shim.c -lssl -lcrypto >" + dir_ + "/cc.log 2>&1");
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::string read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::unique_ptr<FakeApiServer> start(const std::string& client_ca = "") {
    if (!shim_built_) return nullptr;
    auto s = FakeApiServer::start_tls(dir_ + "/server.pem", dir_ + "/libshim.so", client_ca);
    s->add_resource("v1", "Node", "nodes", false);
    return s;
  }

  static inline std::string dir_;
  static inline bool shim_built_ = false;
};

TEST_F(KubeClientTlsTest, VerifiesTheServerAgainstTheClusterCa) {
  auto server = start();
  if (!server) GTEST_SKIP() << "the civetweb TLS shim could not be built (no cc or libssl-dev)";
  ASSERT_EQ(server->url().rfind("https://", 0), 0u);
  KubeAuth with_file;
  with_file.server = server->url();
  with_file.ca_file = dir_ + "/server.crt";
  auto r = KubeClient(with_file).request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.status << " " << r.error;

  KubeAuth with_data;
  with_data.server = server->url();
  with_data.ca_data = read("server.crt");
  r = KubeClient(with_data).request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.status << " " << r.error;

  KubeAuth system_cas;  // the self-signed certificate is in no system bundle
  system_cas.server = server->url();
  r = KubeClient(system_cas).request("GET", "/api/v1/nodes");
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());

  KubeAuth wrong_ca;
  wrong_ca.server = server->url();
  wrong_ca.ca_file = dir_ + "/client.crt";
  r = KubeClient(wrong_ca).request("GET", "/api/v1/nodes");
  EXPECT_FALSE(r.error.empty());

  KubeAuth insecure;
  insecure.server = server->url();
  insecure.insecure_skip_tls_verify = true;
  r = KubeClient(insecure).request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.error;
}

TEST_F(KubeClientTlsTest, PresentsAClientCertificate) {
  auto server = start(dir_ + "/client.crt");
  if (!server) GTEST_SKIP() << "the civetweb TLS shim could not be built (no cc or libssl-dev)";
  KubeAuth with_cert;
  with_cert.server = server->url();
  with_cert.ca_file = dir_ + "/server.crt";
  with_cert.client_cert_data = read("client.crt");
  with_cert.client_key_data = read("client.key");
  auto r = KubeClient(with_cert).request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.status << " " << r.error;

  KubeAuth files = with_cert;
  files.client_cert_data.clear();
  files.client_key_data.clear();
  files.client_cert_file = dir_ + "/client.crt";
  files.client_key_file = dir_ + "/client.key";
  r = KubeClient(files).request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.status << " " << r.error;

  KubeAuth without = with_cert;
  without.client_cert_data.clear();
  without.client_key_data.clear();
  r = KubeClient(without).request("GET", "/api/v1/nodes");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace gpuaas::bridge
