// gpuaas-bridge's configuration file: defaults, every section, and errors that name the file,
// the line and the key.
#include "gpuaas/bridge/bridge_config.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gpuaas::bridge {
namespace {

TEST(BridgeConfigTest, DefaultsWatchTheCoresKindsAndKnowTheActedOnOnes) {
  const BridgeConfig cfg = default_bridge_config();
  // The workload kinds are the plugins' (plugin_kinds_test.cpp), never a default.
  const std::set<std::string> core_kinds = {
      "Node", "Pod", "Namespace", "PodDisruptionBudget", "PriorityClass", "MachineSet"};
  std::set<std::string> watched;
  for (const auto& r : cfg.resources)
    if (r.watch) watched.insert(r.kind);
  for (const auto& k : watched) EXPECT_TRUE(core_kinds.count(k)) << k << " is watched by default";
  for (const char* k : {"Node", "Pod", "MachineSet"}) EXPECT_TRUE(watched.count(k)) << k;
  ASSERT_NE(cfg.resource("cluster.x-k8s.io/v1beta1", "Machine"), nullptr);
  EXPECT_FALSE(cfg.resource("cluster.x-k8s.io/v1beta1", "Machine")->watch);
  EXPECT_NE(cfg.resource("autoscaling.x-k8s.io/v1", "ProvisioningRequest"), nullptr);
  EXPECT_TRUE(cfg.kubernetes.in_cluster);
  EXPECT_TRUE(cfg.actions.apply);
  EXPECT_EQ(cfg.watch.timeout_seconds, 300);
  EXPECT_TRUE(cfg.webhook.listen.empty());
  EXPECT_TRUE(cfg.webhook.holds.empty()) << "nothing is held that no plugin releases";
  EXPECT_TRUE(cfg.plugins_dir.empty());
  EXPECT_EQ(cfg.nats.name, "gpuaas-bridge");
}

TEST(BridgeConfigTest, PathsFollowTheApiGroups) {
  const BridgeConfig cfg = default_bridge_config();
  EXPECT_EQ(collection_path(*cfg.resource("v1", "Pod"), "a"), "/api/v1/namespaces/a/pods");
  EXPECT_EQ(collection_path(*cfg.resource("v1", "Node"), "ignored"), "/api/v1/nodes");
  const ResourceConfig rc{"ray.io/v1", "RayCluster", "rayclusters", true, true};
  EXPECT_EQ(object_path(rc, "t", "rc"), "/apis/ray.io/v1/namespaces/t/rayclusters/rc");
  EXPECT_EQ(collection_path(rc), "/apis/ray.io/v1/rayclusters");
}

TEST(BridgeConfigTest, EverySectionIsRead) {
  BridgeConfig cfg = default_bridge_config();
  auto st = parse_bridge_config(R"(cluster: prod-a
server: nats://nats:4222
root: team
nats: {user: bridge, passwordFile: /secrets/pw, tls: {ca: /ca.pem}}
kubernetes: {inCluster: false, kubeconfig: /kube/config, context: admin, tokenRefresh: 30s}
resources:
- {apiVersion: ray.io/v1, kind: RayJob, plural: rayjobs}
- {apiVersion: v1, kind: Node, plural: nodes, namespaced: false}
watch: {timeoutSeconds: 120, pageSize: 100}
actions: {apply: false, consumer: b2, stateBucket: B2_STATE, stateReplicas: 3, reportEvents: false}
webhook:
  listen: 0.0.0.0:9443
  certFile: /tls/crt
  keyFile: /tls/key
  queueLabel: example.com/queue
  holds:
  - {apiGroup: example.com, kind: Widget, action: setTrue, path: /spec/paused}
metrics:
  interval: 30s
  scrape: [http://dcgm:9400/metrics, {url: "https://qp:9091/metrics"}]
  prometheus: {url: http://prom:9090, queries: [DCGM_FI_DEV_GPU_UTIL]}
admin: 127.0.0.1:9999
plugins: /opt/gpuaas/lib/gpuaas/plugins
)",
                                "bridge.yaml", cfg);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(cfg.cluster, "prod-a");
  EXPECT_EQ(cfg.nats.url, "nats://nats:4222");
  EXPECT_EQ(cfg.root, "team");
  EXPECT_EQ(cfg.nats.user, "bridge");
  EXPECT_EQ(cfg.nats.password_file, "/secrets/pw");
  EXPECT_EQ(cfg.nats.tls_ca, "/ca.pem");
  EXPECT_FALSE(cfg.kubernetes.in_cluster);
  EXPECT_EQ(cfg.kubernetes.context, "admin");
  EXPECT_EQ(cfg.kubernetes.token_refresh, std::chrono::seconds(30));
  // The list replaces the watched defaults; the acted-on kinds stay.
  std::size_t watched = 0;
  for (const auto& r : cfg.resources) watched += r.watch;
  EXPECT_EQ(watched, 2u);
  EXPECT_NE(cfg.resource("policy/v1", "Eviction"), nullptr);
  EXPECT_EQ(cfg.resource("ray.io/v1", "RayCluster"), nullptr);
  EXPECT_EQ(cfg.watch.timeout_seconds, 120);
  EXPECT_EQ(cfg.watch.page_size, 100);
  EXPECT_FALSE(cfg.actions.apply);
  EXPECT_EQ(cfg.actions.consumer, "b2");
  EXPECT_EQ(cfg.actions.state_bucket, "B2_STATE");
  EXPECT_EQ(cfg.actions.state_replicas, 3);
  EXPECT_FALSE(cfg.actions.report_events);
  EXPECT_EQ(cfg.webhook.queue_label, "example.com/queue");
  EXPECT_EQ(cfg.webhook.holds.size(), default_hold_rules().size() + 1);
  EXPECT_EQ(cfg.webhook.hold_overrides.size(), 1u);
  EXPECT_EQ(cfg.plugins_dir, "/opt/gpuaas/lib/gpuaas/plugins");
  EXPECT_EQ(cfg.metrics.interval, std::chrono::seconds(30));
  EXPECT_EQ(cfg.metrics.scrape.size(), 2u);
  EXPECT_EQ(cfg.metrics.prometheus_url, "http://prom:9090");
  EXPECT_EQ(cfg.admin, "127.0.0.1:9999");
}

TEST(BridgeConfigTest, ErrorsNameTheFileTheLineAndTheKey) {
  auto error = [](const std::string& text) {
    BridgeConfig cfg = default_bridge_config();
    auto st = parse_bridge_config(text, "bridge.yaml", cfg);
    return st ? std::string() : st.message();
  };
  EXPECT_NE(error("cluster: a\nwatchh: {}\n").find("bridge.yaml:2:1: unknown setting \"watchh\""),
            std::string::npos)
      << error("cluster: a\nwatchh: {}\n");
  EXPECT_NE(error("watch: {timeoutSeconds: -3}\n").find("bridge.yaml:1:"), std::string::npos);
  EXPECT_NE(error("actions: {apply: maybe}\n").find("true or false"), std::string::npos);
  EXPECT_NE(error("resources:\n- {kind: Pod}\n").find("apiVersion, kind and plural"),
            std::string::npos);
  EXPECT_NE(error("metrics: {scrape: [dcgm:9400]}\n").find("not an http"), std::string::npos);
  EXPECT_NE(error("kubernetes: {inCluster: false}\n").find("kubeconfig"), std::string::npos);
  EXPECT_NE(error("cluster: [unclosed\n").find("bridge.yaml:"), std::string::npos);
  EXPECT_NE(error("metrics: {interval: soon}\n").find("not a duration"), std::string::npos);

  BridgeConfig cfg = default_bridge_config();
  auto st = load_bridge_config("/nonexistent/bridge.yaml", cfg);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("/nonexistent/bridge.yaml"), std::string::npos);
}

}  // namespace
}  // namespace gpuaas::bridge
