// The whole loop with the Kubernetes API faked in-process, for end-to-end tests: a real
// nats-server and gpuaasd (daemon_e2e.hpp), the in-process fake API server, and the
// gpuaas-bridge executable between them, on 127.0.0.1. Header-only: GPUAAS_BIN_DIR and
// GPUAAS_SHARED_DIR are a test executable's definitions.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../tools/daemon_e2e.hpp"
#include "fake_api_server.hpp"
#include "gpuaas/kube/manifest_reader.hpp"

namespace gpuaas::testing {

inline json first_manifest(const std::string& rel) {
  auto docs = kube::read_manifests(shared_dir() + "/manifests/" + rel);
  EXPECT_TRUE(docs) << docs.status().message();
  return docs && !docs->empty() ? json::parse((*docs)[0].json) : json();
}

inline json yaml_json(const std::string& text) {
  auto docs = kube::parse_manifests(text, "inline");
  EXPECT_TRUE(docs && docs->size() == 1);
  return json::parse((*docs)[0].json);
}

// kH100QueuePolicy with room for twelve GPUs, so quota never decides where pods go.
inline std::string h100_queue_policy_12() {
  std::string p = kH100QueuePolicy;
  const std::string q = "{name: nvidia.com/gpu, nominalQuota: 4}";
  p.replace(p.find(q), q.size(), "{name: nvidia.com/gpu, nominalQuota: 12}");
  return p;
}

// A kind the fake API serves and the bridge watches.
struct BridgeResource {
  std::string api_version, kind, plural;
  bool namespaced = true;
};

class BridgeEndToEnd : public DaemonEndToEnd {
 protected:
  // Node, Pod and Event always; RayJob and RayCluster unless `workloads` names others.
  explicit BridgeEndToEnd(
      std::vector<BridgeResource> workloads = {{"ray.io/v1", "RayJob", "rayjobs"},
                                               {"ray.io/v1", "RayCluster", "rayclusters"}})
      : DaemonEndToEnd("bridge"), workloads_(std::move(workloads)) {}

  void SetUp() override {
    DaemonEndToEnd::SetUp();
    api_ = bridge::FakeApiServer::start();
    api_->add_resource("v1", "Node", "nodes", false);
    api_->add_resource("v1", "Pod", "pods", true);
    api_->add_resource("v1", "Event", "events", true);
    for (const auto& r : workloads_) api_->add_resource(r.api_version, r.kind, r.plural, true);
    api_->require_token("e2e-token");
    write("kubeconfig",
          "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
          "clusters:\n- name: fake\n  cluster: {server: \"" +
              api_->url() +
              "\"}\nusers:\n- name: u\n  user: {token: e2e-token}\n"
              "contexts:\n- name: fake\n  context: {cluster: fake, user: u}\n");
    // Only the kinds the fake serves; short watches so re-watches happen within the test.
    std::string resources =
        "- {apiVersion: v1, kind: Node, plural: nodes, namespaced: false}\n"
        "- {apiVersion: v1, kind: Pod, plural: pods}\n";
    for (const auto& r : workloads_) {
      resources +=
          "- {apiVersion: " + r.api_version + ", kind: " + r.kind + ", plural: " + r.plural + "}\n";
    }
    write("bridge.yaml", "cluster: e2e\nroot: " + root_ +
                             "\nkubernetes: {inCluster: false, kubeconfig: " + dir_ +
                             "/kubeconfig}\nwatch: {timeoutSeconds: 5}\nadmin: \"\"\n"
                             "resources:\n" +
                             resources);
  }

  void start_bridge(const std::string& log_name) {
    bridge_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaas-bridge", "--config", dir_ + "/bridge.yaml",
                                 "--server", url()},
        dir_ + "/" + log_name);
  }

  // Both logs, for failure messages.
  std::string logs() const {
    return "bridge:\n" + (bridge_ ? bridge_->log() : std::string()) + "\ngpuaasd:\n" + log();
  }

  std::vector<BridgeResource> workloads_;
  std::unique_ptr<bridge::FakeApiServer> api_;
  std::unique_ptr<ChildProcess> bridge_;
};

}  // namespace gpuaas::testing
