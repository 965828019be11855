// Where the bridge's Kubernetes credentials come from: the pod's service account (a temp dir and
// the KUBERNETES_SERVICE_* variables stand in for it) or a kubeconfig file (written here).
#include "gpuaas/bridge/kube_auth.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fake_api_server.hpp"
#include "gpuaas/bridge/kube_client.hpp"

namespace gpuaas::bridge {
namespace {

namespace fs = std::filesystem;

// "-----BEGIN CERTIFICATE-----\nCA\n" and friends, base64-encoded as kubeconfig holds them.
constexpr const char* kCaPem = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr const char* kCaB64 =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";
constexpr const char* kCertB64 = "Q0VSVA==";  // "CERT"
constexpr const char* kKeyB64 = "S0VZ";       // "KEY"

class KubeAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuaas-kube-auth-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    saved_host =
        std::getenv("KUBERNETES_SERVICE_HOST") ? std::getenv("KUBERNETES_SERVICE_HOST") : "";
    saved_port =
        std::getenv("KUBERNETES_SERVICE_PORT") ? std::getenv("KUBERNETES_SERVICE_PORT") : "";
  }
  void TearDown() override {
    fs::remove_all(dir);
    restore("KUBERNETES_SERVICE_HOST", saved_host);
    restore("KUBERNETES_SERVICE_PORT", saved_port);
  }
  static void restore(const char* name, const std::string& value) {
    if (value.empty()) {
      unsetenv(name);
    } else {
      setenv(name, value.c_str(), 1);
    }
  }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = fs::path(dir) / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  std::string dir, saved_host, saved_port;
};

TEST_F(KubeAuthTest, InClusterReadsTheServiceAccount) {
  write("sa/token", "eyJhbGciOi.token\n");
  write("sa/ca.crt", kCaPem);
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto auth = in_cluster_auth(dir + "/sa");
  ASSERT_TRUE(auth) << auth.status().message();
  EXPECT_EQ(auth->server, "https://10.96.0.1:443");
  EXPECT_EQ(auth->token, "eyJhbGciOi.token");
  EXPECT_EQ(auth->token_file, dir + "/sa/token");  // re-read as it rotates
  EXPECT_EQ(auth->ca_file, dir + "/sa/ca.crt");
  EXPECT_EQ(auth->token_refresh, std::chrono::seconds(60));

  setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
  auth = in_cluster_auth(dir + "/sa");
  ASSERT_TRUE(auth);
  EXPECT_EQ(auth->server, "https://[fd00:10:96::1]:443");
}

TEST_F(KubeAuthTest, InClusterErrorsNameWhatIsMissing) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  auto auth = in_cluster_auth(dir + "/sa");
  ASSERT_FALSE(auth);
  EXPECT_NE(auth.status().message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);

  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auth = in_cluster_auth(dir + "/sa");
  ASSERT_FALSE(auth);
  EXPECT_NE(auth.status().message().find(dir + "/sa/token"), std::string::npos);

  write("sa/token", "t");
  auth = in_cluster_auth(dir + "/sa");
  ASSERT_FALSE(auth);
  EXPECT_NE(auth.status().message().find("ca.crt"), std::string::npos);
}

constexpr const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority: certs/ca.crt
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: CA_B64
- name: lab-cluster
  cluster:
    server: https://lab.example
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    client-certificate-data: CERT_B64
    client-key-data: KEY_B64
- name: lab-user
  user:
    tokenFile: secrets/token
    client-certificate: certs/client.crt
    client-key: /abs/client.key
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: lab
  context: {cluster: lab-cluster, user: lab-user}
)";

std::string Kubeconfig() {
  std::string text = kKubeconfig;
  const auto replace = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("CA_B64", kCaB64);
  replace("CERT_B64", kCertB64);
  replace("KEY_B64", kKeyB64);
  return text;
}

TEST_F(KubeAuthTest, KubeconfigCurrentContextWithTokenAndRelativeCaFile) {
  const std::string path = write("kube/config", Kubeconfig());
  auto auth = kubeconfig_auth(path);
  ASSERT_TRUE(auth) << auth.status().message();
  EXPECT_EQ(auth->server, "https://dev.example:6443");   // no trailing slash
  EXPECT_EQ(auth->ca_file, dir + "/kube/certs/ca.crt");  // relative to the kubeconfig
  EXPECT_EQ(auth->token, "dev-token");
  EXPECT_TRUE(auth->client_cert_data.empty());
}

TEST_F(KubeAuthTest, KubeconfigNamedContextWithDataFields) {
  const std::string path = write("kube/config", Kubeconfig());
  auto auth = kubeconfig_auth(path, "prod");
  ASSERT_TRUE(auth) << auth.status().message();
  EXPECT_EQ(auth->server, "https://prod.example:6443");
  EXPECT_EQ(auth->ca_data, kCaPem);
  EXPECT_TRUE(auth->ca_file.empty());
  EXPECT_EQ(auth->client_cert_data, "CERT");
  EXPECT_EQ(auth->client_key_data, "KEY");
  EXPECT_TRUE(auth->token.empty());
}

TEST_F(KubeAuthTest, KubeconfigTokenFileClientFilesAndInsecure) {
  write("kube/secrets/token", "lab-token\n");
  const std::string path = write("kube/config", Kubeconfig());
  auto auth = kubeconfig_auth(path, "lab");
  ASSERT_TRUE(auth) << auth.status().message();
  EXPECT_TRUE(auth->insecure_skip_tls_verify);
  EXPECT_EQ(auth->token, "lab-token");
  EXPECT_EQ(auth->token_file, dir + "/kube/secrets/token");
  EXPECT_EQ(auth->client_cert_file, dir + "/kube/certs/client.crt");
  EXPECT_EQ(auth->client_key_file, "/abs/client.key");
}

TEST_F(KubeAuthTest, KubeconfigErrorsNameFileLineAndKey) {
  const std::string path = write("kube/config", Kubeconfig());
  auto missing = kubeconfig_auth(path, "staging");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("'staging'"), std::string::npos);
  EXPECT_NE(missing.status().message().find(path + ":"), std::string::npos);

  const std::string bad = write("bad.yaml", "clusters:\n- name: a\n  cluster: {server: [\n");
  auto broken = kubeconfig_auth(bad);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.status().message().find(bad + ":"), std::string::npos)
      << broken.status().message();

  std::string text = Kubeconfig();
  text.replace(text.find(kCaB64), std::string(kCaB64).size(), "not*base64");
  const std::string corrupt = write("corrupt.yaml", text);
  auto decoded = kubeconfig_auth(corrupt, "prod");
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.status().message().find(corrupt + ":12"), std::string::npos)
      << decoded.status().message();
  EXPECT_NE(decoded.status().message().find("certificate-authority-data"), std::string::npos);

  auto absent = kubeconfig_auth(dir + "/nothing");
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.status().message().find("nothing"), std::string::npos);
}

TEST_F(KubeAuthTest, KubeconfigDrivesARealRequest) {
  auto server = FakeApiServer::start();
  server->add_resource("v1", "Node", "nodes", false);
  server->require_token("dev-token");
  std::string text = Kubeconfig();
  text.replace(text.find("https://dev.example:6443/"), 25, server->url());
  text.replace(text.find("    certificate-authority: certs/ca.crt\n"), 40, "");
  auto auth = kubeconfig_auth(write("kube/config", text));
  ASSERT_TRUE(auth) << auth.status().message();
  KubeClient client(*auth);
  const auto r = client.request("GET", "/api/v1/nodes");
  EXPECT_TRUE(r.ok()) << r.status << r.body;
}

TEST(Base64, DecodesStandardAndUrlAlphabetsIgnoringWhitespace) {
  EXPECT_EQ(base64_decode("aGVsbG8=").value(), "hello");
  EXPECT_EQ(base64_decode("aGVs\nbG8").value(), "hello");
  EXPECT_EQ(base64_decode("-_8=").value(), std::string("\xfb\xff"));
  EXPECT_FALSE(base64_decode("a*b"));
}

}  // namespace
}  // namespace gpuaas::bridge
