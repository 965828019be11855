// gpuaas-bridge's configuration: a YAML file (docs/bridge.md lists every key), defaults for what
// it leaves out. Errors name the file, line and key, as gpuaasd's do.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bridge/workload_hold.hpp"
#include "gpuaas/bus/nats_bus.hpp"

namespace gpuaas::bridge {

// One kind the bridge watches and acts on. Its API path is /api/v1/... for apiVersion "v1" and
// /apis/<group>/<version>/... otherwise.
struct ResourceConfig {
  std::string api_version;  // "v1", "ray.io/v1"
  std::string kind;         // "RayCluster"
  std::string plural;       // "rayclusters"
  bool namespaced = true;
  bool watch = true;  // false: only acted on (Eviction, ProvisioningRequest, Machine...)
};

struct BridgeConfig {
  std::string cluster = "default";  // events' source: gpuaas-bridge/<cluster>
  std::string root = "gpuaas";      // subject root
  bus::NatsOptions nats;

  struct Kubernetes {
    bool in_cluster = true;
    std::string kubeconfig;  // used when in_cluster is false
    std::string context;
    std::chrono::seconds token_refresh{60};
    // The write budget (write_budget.hpp): writes per second and the burst above it.
    double qps = 20;
    int burst = 40;
  } kubernetes;

  std::vector<ResourceConfig> resources;  // defaults: default_resources(), then the plugins' kinds
  std::string plugins_dir;                // `plugins:`: the workload plugins, loaded with the host

  struct Watch {
    int timeout_seconds = 300;
    int page_size = 500;
  } watch;

  struct Actions {
    bool apply = true;  // false: advisory mode, actions are read and reported, never applied
    std::string consumer = "gpuaas-bridge";
    std::string state_bucket;   // "" = <ROOT>_BRIDGE
    int state_replicas = 1;     // of that bucket: 3 on a 3-node NATS cluster
    bool report_events = true;  // a Kubernetes Event and a status annotation per decision
  } actions;

  struct Webhook {
    std::string listen;  // "" = no webhook
    std::string cert_file = "/etc/gpuaas/webhook/tls.crt";
    std::string key_file = "/etc/gpuaas/webhook/tls.key";
    std::string queue_label = kDefaultQueueLabel;
    // The rules in force: the plugins' kinds' holds (plugin_kinds.hpp) with `holds:` over them.
    std::vector<HoldRule> holds = default_hold_rules();
    std::vector<HoldRule> hold_overrides;  // `holds:` as written, kNone entries included
    // `placementGates`: gate the pod templates of a new queued workload whose kind's binding is
    // required (placement_gates.hpp); needs the plugins (`plugins:`) to ask for its demand.
    bool placement_gates = true;
  } webhook;

  struct Metrics {
    std::chrono::seconds interval{15};
    std::vector<std::string> scrape;  // Prometheus targets' URLs
    std::string prometheus_url;       // or a Prometheus server to query
    std::vector<std::string> queries;
  } metrics;

  std::string admin = "0.0.0.0:9465";  // the bridge's own /metrics and /healthz

  // Where an action's target kind lives; nullptr for a kind the bridge does not know.
  const ResourceConfig* resource(const std::string& api_version, const std::string& kind) const;
};

// The kinds the core consumes, watched by default (Nodes, Pods, MachineSets...), and the kinds
// only acted on (node removal, drains, provisioning). The workload kinds are the plugins'
// (plugin_kinds.hpp).
std::vector<ResourceConfig> default_resources();

BridgeConfig default_bridge_config();
// Reads `path` over the defaults in `cfg`. A `resources:` list replaces the watched defaults.
Status load_bridge_config(const std::string& path, BridgeConfig& cfg);
// The same from text (`name` stands for the file in errors): tests and the manifests' ConfigMap.
Status parse_bridge_config(const std::string& text, const std::string& name, BridgeConfig& cfg);

// "/api/v1/namespaces/<ns>/pods", "/apis/ray.io/v1/rayclusters" (all namespaces when ns is "").
std::string collection_path(const ResourceConfig& r, const std::string& ns = "");
// The object's path: collection_path(r, ns) + "/" + name.
std::string object_path(const ResourceConfig& r, const std::string& ns, const std::string& name);

}  // namespace gpuaas::bridge
