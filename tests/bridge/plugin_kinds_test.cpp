// The bridge's kinds from this build's plugins: what it watches, how the webhook holds each kind,
// the configuration over them, and every shared sample manifest a plugin claims going through
// decide_hold and coming out held as its kind declares.
#include "gpuaas/bridge/plugin_kinds.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "manifests.hpp"
#include "plugin_rules.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

BridgeConfig with_plugins(BridgeConfig cfg = default_bridge_config()) {
  apply_plugin_kinds(cfg, built_plugins());
  return cfg;
}

const host::PluginKind* claimed(const std::string& api_version, const std::string& kind) {
  for (const auto& p : built_plugins()) {
    for (const auto& k : p.kinds) {
      if (k.api_version() == api_version && k.kind == kind) return &k;
    }
  }
  return nullptr;
}

TEST(PluginKinds, WatchesEveryPluginKindOnceBesidesTheCoresKinds) {
  ASSERT_GE(built_plugins().size(), 5u) << "the plugins of this build were not found";
  const BridgeConfig cfg = with_plugins();
  std::map<std::pair<std::string, std::string>, int> watched;  // (group, kind) -> versions
  for (const auto& r : cfg.resources) {
    if (r.watch) ++watched[{std::string(api_group_of(r.api_version)), r.kind}];
  }
  for (const auto& [gk, n] : watched) EXPECT_EQ(n, 1) << gk.second << " watched twice";
  for (const auto& p : built_plugins()) {
    for (const auto& k : p.kinds) {
      const ResourceConfig* r = cfg.resource(k.api_version(), k.kind);
      ASSERT_NE(r, nullptr) << k.api_version() << " " << k.kind;
      EXPECT_EQ(r->plural, k.plural);
      EXPECT_EQ(r->namespaced, k.namespaced);
      EXPECT_TRUE(watched.count({k.group, k.kind})) << k.kind;
    }
  }
  for (const char* kind : {"RayCluster", "RayJob", "InferenceService", "PyTorchJob", "TFJob",
                           "MPIJob", "TrainJob", "Notebook", "Job", "Node", "Pod", "MachineSet"}) {
    bool found = false;
    for (const auto& [gk, n] : watched) found = found || gk.second == kind;
    EXPECT_TRUE(found) << kind;
  }
  // The first version a plugin declares is watched; the others are only acted on.
  EXPECT_TRUE(cfg.resource("kubeflow.org/v2beta1", "MPIJob")->watch);
  EXPECT_FALSE(cfg.resource("kubeflow.org/v1", "MPIJob")->watch);
  EXPECT_TRUE(cfg.resource("kubeflow.org/v1", "Notebook")->watch);
  EXPECT_FALSE(cfg.resource("kubeflow.org/v1beta1", "Notebook")->watch);
  EXPECT_EQ(collection_path(*cfg.resource("ray.io/v1", "RayJob"), "a"),
            "/apis/ray.io/v1/namespaces/a/rayjobs");
}

TEST(PluginKinds, HoldRulesAreThePluginsDeclarations) {
  const auto rules = plugin_hold_rules(built_plugins());
  EXPECT_EQ(find_hold_rule(rules, "batch", "Job")->path, "/spec/suspend");
  EXPECT_EQ(find_hold_rule(rules, "ray.io", "RayJob")->path, "/spec/suspend");
  EXPECT_EQ(find_hold_rule(rules, "ray.io", "RayCluster")->path, "/spec/suspend");
  EXPECT_EQ(find_hold_rule(rules, "trainer.kubeflow.org", "TrainJob")->path, "/spec/suspend");
  for (const char* kind : {"PyTorchJob", "TFJob", "MPIJob"}) {
    EXPECT_EQ(find_hold_rule(rules, "kubeflow.org", kind)->path, "/spec/runPolicy/suspend");
  }
  const HoldRule* nb = find_hold_rule(rules, "kubeflow.org", "Notebook");
  ASSERT_NE(nb, nullptr);
  EXPECT_EQ(nb->key, "kubeflow-resource-stopped");
  EXPECT_EQ(nb->value, "1970-01-01T00:00:00Z");
  EXPECT_TRUE(nb->any_value);
  const HoldRule* isvc = find_hold_rule(rules, "serving.kserve.io", "InferenceService");
  ASSERT_NE(isvc, nullptr);
  EXPECT_EQ(isvc->key, "serving.kserve.io/stop");
  EXPECT_EQ(isvc->value, "true");
  EXPECT_FALSE(isvc->any_value);
  // One rule per group and kind, and only for kinds a plugin claims.
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : rules) {
    EXPECT_TRUE(seen.insert({r.api_group, r.kind}).second) << r.kind;
    bool plugin_kind = false;
    for (const auto& p : built_plugins()) {
      for (const auto& k : p.kinds)
        plugin_kind = plugin_kind || (k.group == r.api_group && k.kind == r.kind);
    }
    EXPECT_TRUE(plugin_kind) << r.kind << " is held but no plugin releases it";
  }
  // Without plugins nothing is held.
  BridgeConfig none = default_bridge_config();
  apply_plugin_kinds(none, {});
  EXPECT_TRUE(none.webhook.holds.empty());
}

// Which pods the webhook gates: batch and gang kinds are bound (required), serving and sessions
// are not (preferred), as each plugin declares.
TEST(PluginKinds, EveryKindDeclaresItsBinding) {
  using B = host::KindBinding;
  const std::vector<std::tuple<std::string, std::string, B>> want = {
      {"batch/v1", "Job", B::kRequired},
      {"ray.io/v1", "RayCluster", B::kRequired},
      {"ray.io/v1", "RayJob", B::kRequired},
      {"kubeflow.org/v1", "PyTorchJob", B::kRequired},
      {"kubeflow.org/v1", "TFJob", B::kRequired},
      {"kubeflow.org/v2beta1", "MPIJob", B::kRequired},
      {"kubeflow.org/v1", "MPIJob", B::kRequired},
      {"trainer.kubeflow.org/v1alpha1", "TrainJob", B::kRequired},
      {"v1", "Pod", B::kRequired},
      {"serving.kserve.io/v1beta1", "InferenceService", B::kPreferred},
      {"kubeflow.org/v1", "Notebook", B::kPreferred},
      {"kubeflow.org/v1beta1", "Notebook", B::kPreferred},
  };
  std::size_t kinds = 0;
  for (const auto& p : built_plugins()) kinds += p.kinds.size();
  EXPECT_EQ(kinds, want.size()) << "a kind without an expected binding here";
  for (const auto& [api_version, kind, binding] : want) {
    const host::PluginKind* k = claimed(api_version, kind);
    ASSERT_NE(k, nullptr) << api_version << " " << kind;
    EXPECT_TRUE(k->declared) << kind;
    EXPECT_EQ(host::binding_name(k->binding), host::binding_name(binding)) << kind;
  }
}

TEST(PluginKinds, TheConfigurationWinsByKind) {
  BridgeConfig cfg = default_bridge_config();
  ASSERT_TRUE(parse_bridge_config(R"(resources:
- {apiVersion: v1, kind: Node, plural: nodes, namespaced: false}
- {apiVersion: kubeflow.org/v1beta1, kind: Notebook, plural: notebooks}
webhook:
  holds:
  - {apiGroup: batch, kind: Job, action: none}
  - {apiGroup: ray.io, kind: RayJob, action: setTrue, path: /spec/paused}
)",
                                  "bridge.yaml", cfg));
  cfg = with_plugins(std::move(cfg));
  EXPECT_EQ(find_hold_rule(cfg.webhook.holds, "batch", "Job"), nullptr);
  EXPECT_EQ(find_hold_rule(cfg.webhook.holds, "ray.io", "RayJob")->path, "/spec/paused");
  EXPECT_EQ(find_hold_rule(cfg.webhook.holds, "ray.io", "RayCluster")->path, "/spec/suspend");
  // The configured v1beta1 Notebook is watched, so the plugin's v1 is only acted on.
  EXPECT_TRUE(cfg.resource("kubeflow.org/v1beta1", "Notebook")->watch);
  EXPECT_FALSE(cfg.resource("kubeflow.org/v1", "Notebook")->watch);
  EXPECT_TRUE(cfg.resource("ray.io/v1", "RayJob")->watch);
}

// Where the hold shows on the object, as the kind declares it.
bool shows_hold(const json& o, const host::KindHold& h) {
  switch (h.type) {
    case host::KindHold::Type::kSetTrue: {
      const auto p = json::json_pointer(h.target);
      return o.contains(p) && o.at(p) == true;
    }
    case host::KindHold::Type::kAnnotation: {
      const auto p = json::json_pointer("/metadata/annotations/" + escape_pointer_token(h.target));
      return o.contains(p) && o.at(p).is_string() && (h.any_value || o.at(p) == h.value);
    }
    case host::KindHold::Type::kSchedulingGate:
      for (const auto& g : o.value("/spec/schedulingGates"_json_pointer, json::array())) {
        if (g.value("name", "") == h.target) return true;
      }
      return false;
    case host::KindHold::Type::kNone:
      break;
  }
  return true;
}

TEST(PluginKinds, EverySharedManifestAPluginClaimsComesOutHeldAsItsKindSays) {
  const auto rules = with_plugins().webhook.holds;
  std::map<std::string, int> held;  // kind -> objects held
  int claimed_objects = 0;
  for (const auto& e : fs::recursive_directory_iterator(manifests_dir())) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".yaml" && ext != ".yml")) continue;
    std::vector<json> docs;
    try {
      docs = load_manifest_file(e.path().string());
    } catch (...) {
      continue;  // not a Kubernetes manifest
    }
    for (json o : docs) {
      if (!o.is_object() || !o.contains("kind") || !o.contains("apiVersion")) continue;
      const auto* k = claimed(o["apiVersion"], o["kind"]);
      if (k == nullptr) continue;
      ++claimed_objects;
      SCOPED_TRACE(e.path().string() + ": " + k->kind);
      // Queued: a sample without the label is given one, as a user submitting it to a queue.
      if (o["metadata"].value("labels", json::object()).value(kDefaultQueueLabel, "").empty())
        o["metadata"]["labels"][kDefaultQueueLabel] = "team-a";
      const auto d = decide_hold(o, "CREATE", k->group, k->kind, kDefaultQueueLabel, rules);
      if (k->hold.type == host::KindHold::Type::kNone) {
        EXPECT_FALSE(d.held) << d.reason;
        continue;
      }
      EXPECT_TRUE(d.warning.empty()) << d.warning;
      if (!d.held) {
        EXPECT_EQ(d.reason, "already held");
        EXPECT_TRUE(shows_hold(o, k->hold));
        continue;
      }
      const json after = o.patch(d.patch);
      EXPECT_TRUE(shows_hold(after, k->hold)) << d.patch.dump();
      EXPECT_EQ(decide_hold(after, "CREATE", k->group, k->kind, kDefaultQueueLabel, rules).reason,
                "already held");
      ++held[k->kind];
    }
  }
  EXPECT_GE(claimed_objects, 20);
  for (const char* kind : {"Job", "RayJob", "RayCluster", "PyTorchJob", "TFJob", "MPIJob",
                           "TrainJob", "Notebook", "InferenceService"}) {
    EXPECT_GE(held[kind], 1) << "no shared " << kind << " was held";
  }
}

}  // namespace
}  // namespace gpuaas::bridge
