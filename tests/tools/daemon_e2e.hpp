// gpuaasd as a user meets it, for end-to-end tests: a real nats-server, the daemon with a policy
// file and the plugins, everything through gpuaasctl, and the actions it publishes read from
// `gpuaasctl watch actions --json` as they come. Header-only; each test binary includes it once.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One ClusterQueue `batch` with 4 H100 GPUs of quota (team-a's LocalQueue `main`), and a node
// that has them: the smallest cluster admission can work on.
inline constexpr const char* kH100QueuePolicy = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: batch}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 512Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: batch}
---
apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec:
  expectedDuration: {default: 1h}
)";

inline constexpr const char* kH100Node = R"(apiVersion: v1
kind: Node
metadata:
  name: h100-a
  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  capacity: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "4"}
  allocatable: {cpu: "94", memory: 1000Gi, nvidia.com/gpu: "4"}
  conditions:
  - {type: Ready, status: "True"}
)";

// `gpuaasctl watch actions --json` running in the background into a file, read as it grows.
class ActionLog {
 public:
  ActionLog(const std::string& ctl, const std::string& file) : file_(file) {
    proc_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/bin/sh", "-c",
                                 "exec " + ctl + " watch actions --timeout 120 --json > " + file},
        file + ".err");
    // It reads the stream from now on: give it time to subscribe before anything is published.
    std::this_thread::sleep_for(milliseconds(500));
  }
  std::vector<json> all() const {
    std::vector<json> out;
    std::ifstream in(file_);
    for (std::string line; std::getline(in, line);) {
      auto j = json::parse(line, nullptr, false);
      if (j.is_object()) out.push_back(std::move(j));
    }
    return out;
  }
  // The first action on NAME with RULE, or null.
  json find(const std::string& name, const std::string& rule) const {
    for (auto& a : all())
      if (a["target"]["name"] == name && a["rule"] == rule) return a;
    return nullptr;
  }
  std::string dump() const {
    std::string out;
    for (const auto& a : all()) out += a.dump() + "\n";
    return out;
  }

 private:
  std::string file_;
  std::unique_ptr<ChildProcess> proc_;
};

// Subjects under a root of their own per test (`prefix` + a counter), fast ticks.
class DaemonEndToEnd : public NatsServerTest {
 protected:
  explicit DaemonEndToEnd(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    root_ = prefix_ + std::to_string(counter_++);
    // Fast ticks: the daemon's clock (event time) moves with them between our events.
    config_ = write("gpuaasd.yaml",
                    "subjectRoot: " + root_ + "\ntickInterval: 200ms\npolicyWatchInterval: 0s\n");
  }
  void start_daemon(const std::string& policy_text) {
    policy_ = write("policy.yaml", policy_text);
    daemon_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                                 "--admin", "", "--policy", policy_, "--plugins",
                                 bin_dir() + "/../plugins"},
        dir_ + "/gpuaasd.log");
    ASSERT_TRUE(eventually([&] { return ctl("state --json 2>/dev/null").exit_code == 0; }))
        << log();
    actions_ = std::make_unique<ActionLog>(ctl_cmd(), dir_ + "/actions.jsonl");
  }
  std::string ctl_cmd() const {
    return bin_dir() + "/gpuaasctl --server " + url() + " --subject-root " + root_;
  }
  CommandResult ctl(const std::string& args) { return run_command(ctl_cmd() + " " + args); }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  int apply(const std::string& name, const std::string& text) {
    return ctl("apply -f " + write(name, text) + " >/dev/null").exit_code;
  }
  json explain(const std::string& w) {
    auto r = ctl("explain " + w + " --json 2>/dev/null");
    return r.exit_code == 0 ? json::parse(r.out, nullptr, false) : json(nullptr);
  }
  // A ClusterQueue's usage of a resource, as `gpuaasctl state --json` reports it.
  std::string usage(const std::string& cq, const std::string& resource) {
    auto st = json::parse(ctl("state --json").out, nullptr, false);
    if (!st.is_object()) return "";
    for (const auto& q : st["cluster_queues"])
      if (q["name"] == cq)
        for (const auto& r : q["resources"])
          if (r["resource"] == resource) return r["usage"].get<std::string>();
    return "";
  }
  std::string log() const { return daemon_ ? daemon_->log() : std::string(); }
  // Waits (bounded) for the action; returns it or null.
  json await_action(const std::string& name, const std::string& rule,
                    milliseconds bound = seconds(15)) {
    json a;
    eventually([&] { return !(a = actions_->find(name, rule)).is_null(); }, bound);
    return a;
  }

  std::string prefix_;
  std::string dir_, root_, config_, policy_;
  std::unique_ptr<ChildProcess> daemon_;
  std::unique_ptr<ActionLog> actions_;
  static inline int counter_ = 0;
};

}  // namespace gpuaas::testing
