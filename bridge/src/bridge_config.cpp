#include "gpuaas/bridge/bridge_config.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "gpuaas/config/readers.hpp"

namespace gpuaas::bridge {
namespace {

using config::read_bool;
using config::read_string;
using config::read_table;
using config::Reader;
using config::where;

template <typename Int>
Reader int_reader(const std::string& path, Int& out, int64_t min) {
  return [&path, &out, min](const YAML::Node& n) { return config::read_int(path, n, out, min); };
}

template <typename Duration>
Reader duration_reader(const std::string& path, Duration& out) {
  return [&path, &out](const YAML::Node& n) { return config::read_duration(path, n, out); };
}

Reader string_reader(const std::string& path, std::string& out) {
  return [&path, &out](const YAML::Node& n) { return read_string(path, n, out); };
}

Reader bool_reader(const std::string& path, bool& out) {
  return [&path, &out](const YAML::Node& n) { return read_bool(path, n, out); };
}

Status read_strings(const std::string& path, const YAML::Node& n, std::vector<std::string>& out,
                    const std::string& what) {
  if (!n.IsSequence()) return Status::invalid(where(path, n) + what + ": expected a list");
  out.clear();
  for (const auto& item : n) {
    std::string s;
    if (auto st = read_string(path, item, s); !st) return st;
    out.push_back(std::move(s));
  }
  return Status::ok();
}

// A URL to scrape is either a plain string or {url: ...} (the form docs/bridge-metrics.md shows);
// both are accepted so that either way of writing the list works.
Status read_targets(const std::string& path, const YAML::Node& n, std::vector<std::string>& out) {
  if (!n.IsSequence()) return Status::invalid(where(path, n) + "metrics.scrape: expected a list");
  out.clear();
  for (const auto& item : n) {
    std::string url;
    if (item.IsMap()) {
      if (auto st = read_table(path, item, {{"url", string_reader(path, url)}}, "metrics.scrape");
          !st)
        return st;
    } else if (auto st = read_string(path, item, url); !st) {
      return st;
    }
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
      return Status::invalid(where(path, item) + "metrics.scrape: \"" + url +
                             "\" is not an http:// or https:// URL");
    out.push_back(std::move(url));
  }
  return Status::ok();
}

Status read_resources(const std::string& path, const YAML::Node& n,
                      std::vector<ResourceConfig>& out) {
  if (!n.IsSequence()) return Status::invalid(where(path, n) + "resources: expected a list");
  std::vector<ResourceConfig> watched;
  for (const auto& item : n) {
    ResourceConfig r;
    if (auto st = read_table(path, item,
                             {{"apiVersion", string_reader(path, r.api_version)},
                              {"kind", string_reader(path, r.kind)},
                              {"plural", string_reader(path, r.plural)},
                              {"namespaced", bool_reader(path, r.namespaced)},
                              {"watch", bool_reader(path, r.watch)}},
                             "resources");
        !st)
      return st;
    if (r.api_version.empty() || r.kind.empty() || r.plural.empty())
      return Status::invalid(where(path, item) +
                             "resources: apiVersion, kind and plural are required");
    watched.push_back(std::move(r));
  }
  // The act-only kinds stay unless the list names them itself.
  for (auto& d : out) {
    if (d.watch) continue;
    bool named = false;
    for (const auto& w : watched)
      named = named || (w.kind == d.kind && w.api_version == d.api_version);
    if (!named) watched.push_back(d);
  }
  out = std::move(watched);
  return Status::ok();
}

Status read_root(const std::string& path, const YAML::Node& root, BridgeConfig& cfg) {
  auto& k = cfg.kubernetes;
  auto& a = cfg.actions;
  auto& w = cfg.webhook;
  auto& m = cfg.metrics;
  std::map<std::string, Reader> readers = {
      {"cluster", string_reader(path, cfg.cluster)},
      {"server", string_reader(path, cfg.nats.url)},
      {"root", string_reader(path, cfg.root)},
      {"admin", string_reader(path, cfg.admin)},
      {"plugins", string_reader(path, cfg.plugins_dir)},
      {"nats",
       [&](const YAML::Node& n) {
         return read_table(path, n, config::nats_readers(path, cfg.nats), "nats");
       }},
      {"kubernetes",
       [&](const YAML::Node& n) {
         return read_table(path, n,
                           {{"inCluster", bool_reader(path, k.in_cluster)},
                            {"kubeconfig", string_reader(path, k.kubeconfig)},
                            {"context", string_reader(path, k.context)},
                            {"tokenRefresh", duration_reader(path, k.token_refresh)},
                            {"qps",
                             [&](const YAML::Node& v) {
                               // A positive number, as client-go's QPS (a float).
                               double q = 0;
                               const std::string t = v.IsScalar() ? v.Scalar() : "";
                               auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), q);
                               if (t.empty() || ec != std::errc() || p != t.data() + t.size() ||
                                   !(q > 0) || !std::isfinite(q))
                                 return Status::invalid(where(path, v) + "kubernetes.qps: \"" + t +
                                                        "\" is not a number > 0");
                               k.qps = q;
                               return Status::ok();
                             }},
                            {"burst", int_reader(path, k.burst, 1)}},
                           "kubernetes");
       }},
      {"resources", [&](const YAML::Node& n) { return read_resources(path, n, cfg.resources); }},
      {"watch",
       [&](const YAML::Node& n) {
         return read_table(path, n,
                           {{"timeoutSeconds", int_reader(path, cfg.watch.timeout_seconds, 1)},
                            {"pageSize", int_reader(path, cfg.watch.page_size, 1)}},
                           "watch");
       }},
      {"actions",
       [&](const YAML::Node& n) {
         return read_table(path, n,
                           {{"apply", bool_reader(path, a.apply)},
                            {"consumer", string_reader(path, a.consumer)},
                            {"stateBucket", string_reader(path, a.state_bucket)},
                            {"stateReplicas", int_reader(path, a.state_replicas, 1)},
                            {"reportEvents", bool_reader(path, a.report_events)}},
                           "actions");
       }},
      {"webhook",
       [&](const YAML::Node& n) {
         return read_table(path, n,
                           {{"listen", string_reader(path, w.listen)},
                            {"certFile", string_reader(path, w.cert_file)},
                            {"keyFile", string_reader(path, w.key_file)},
                            {"queueLabel", string_reader(path, w.queue_label)},
                            {"placementGates", bool_reader(path, w.placement_gates)},
                            {"holds",
                             [&](const YAML::Node& v) {
                               auto rules = parse_hold_rules(v, path);
                               if (!rules) return rules.status();
                               w.hold_overrides = *rules;
                               w.holds = with_overrides(default_hold_rules(), *rules);
                               return Status::ok();
                             }}},
                           "webhook");
       }},
      {"metrics",
       [&](const YAML::Node& n) {
         return read_table(
             path, n,
             {{"interval", duration_reader(path, m.interval)},
              {"scrape", [&](const YAML::Node& v) { return read_targets(path, v, m.scrape); }},
              {"prometheus",
               [&](const YAML::Node& v) {
                 return read_table(path, v,
                                   {{"url", string_reader(path, m.prometheus_url)},
                                    {"queries",
                                     [&](const YAML::Node& q) {
                                       return read_strings(path, q, m.queries,
                                                           "metrics.prometheus.queries");
                                     }}},
                                   "metrics.prometheus");
               }}},
             "metrics");
       }},
  };
  if (root.IsNull()) return Status::ok();
  if (auto st = read_table(path, root, readers, "the configuration"); !st) return st;
  if (!k.in_cluster && k.kubeconfig.empty())
    return Status::invalid(path +
                           ": kubernetes.inCluster is false and no kubernetes.kubeconfig "
                           "is given");
  if (m.interval.count() <= 0)
    return Status::invalid(path + ": metrics.interval must be at least 1s");
  return Status::ok();
}

}  // namespace

std::vector<ResourceConfig> default_resources() {
  return {
      {"v1", "Node", "nodes", false, true},
      {"v1", "Pod", "pods", true, true},
      // What gpuaasd reads besides workloads (core/include/gpuaas/core/consumed_kinds.hpp).
      {"v1", "Namespace", "namespaces", false, true},
      {"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", true, true},
      {"scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", false, true},
      {"cluster.x-k8s.io/v1beta1", "MachineSet", "machinesets", true, true},
      // Acted on, not watched: node removal, drains and provisioning (docs/scale-out.md).
      {"cluster.x-k8s.io/v1beta1", "Machine", "machines", true, false},
      {"policy/v1", "Eviction", "eviction", true, false},
      {"autoscaling.x-k8s.io/v1", "ProvisioningRequest", "provisioningrequests", true, false},
      {"autoscaling.x-k8s.io/v1beta1", "ProvisioningRequest", "provisioningrequests", true, false},
      {"v1", "PodTemplate", "podtemplates", true, false},
  };
}

BridgeConfig default_bridge_config() {
  BridgeConfig cfg;
  cfg.nats.name = "gpuaas-bridge";
  cfg.nats.retry_on_failed_connect = true;
  cfg.resources = default_resources();
  return cfg;
}

const ResourceConfig* BridgeConfig::resource(const std::string& api_version,
                                             const std::string& kind) const {
  for (const auto& r : resources) {
    if (r.kind == kind && r.api_version == api_version) return &r;
  }
  return nullptr;
}

Status parse_bridge_config(const std::string& text, const std::string& name, BridgeConfig& cfg) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::invalid(name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  try {
    return read_root(name, root, cfg);
  } catch (const YAML::Exception& e) {
    return Status::invalid(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Status load_bridge_config(const std::string& path, BridgeConfig& cfg) {
  std::ifstream in(path);
  if (!in) return Status::not_found(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_bridge_config(ss.str(), path, cfg);
}

std::string collection_path(const ResourceConfig& r, const std::string& ns) {
  std::string p = r.api_version.find('/') == std::string::npos ? "/api/" + r.api_version
                                                               : "/apis/" + r.api_version;
  if (r.namespaced && !ns.empty()) p += "/namespaces/" + ns;
  return p + "/" + r.plural;
}

std::string object_path(const ResourceConfig& r, const std::string& ns, const std::string& name) {
  return collection_path(r, ns) + "/" + name;
}

}  // namespace gpuaas::bridge
