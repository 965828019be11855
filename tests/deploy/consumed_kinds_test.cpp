// Everything the core reads is watched: each kind of core/include/gpuaas/core/consumed_kinds.hpp
// is in gpuaas-bridge's default `resources` (watched, with the same plural and scope) and its
// ClusterRole in deploy/kubernetes grants get, list and watch on it. A kind added to the core's
// model without the bridge carrying it fails here.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <tuple>

#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/core/consumed_kinds.hpp"

namespace gpuaas {
namespace {

std::string group_of(const std::string& api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

// (group, resource, verb) of every rule of the ClusterRole gpuaas-bridge.
std::set<std::tuple<std::string, std::string, std::string>> granted() {
  std::set<std::tuple<std::string, std::string, std::string>> out;
  for (const auto& doc :
       YAML::LoadAllFromFile(GPUAAS_SOURCE_DIR "/deploy/kubernetes/clusterrole.yaml")) {
    if (doc["kind"].as<std::string>("") != "ClusterRole") continue;
    for (const auto& rule : doc["rules"]) {
      for (const auto& g : rule["apiGroups"])
        for (const auto& r : rule["resources"])
          for (const auto& v : rule["verbs"])
            out.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
    }
  }
  return out;
}

TEST(ConsumedKinds, TheBridgeWatchesEachByDefault) {
  const auto resources = bridge::default_resources();
  for (const auto& k : core::kConsumedKinds) {
    const bridge::ResourceConfig* found = nullptr;
    for (const auto& r : resources)
      if (r.api_version == k.api_version && r.kind == k.kind) found = &r;
    ASSERT_NE(found, nullptr) << k.api_version << " " << k.kind << " (" << k.read_for
                              << ") is not in the bridge's default resources";
    EXPECT_TRUE(found->watch) << k.kind;
    EXPECT_EQ(found->plural, k.plural) << k.kind;
    EXPECT_EQ(found->namespaced, k.namespaced) << k.kind;
  }
}

TEST(ConsumedKinds, TheClusterRoleLetsTheBridgeWatchEach) {
  const auto rules = granted();
  ASSERT_FALSE(rules.empty());
  for (const auto& k : core::kConsumedKinds) {
    for (const char* verb : {"get", "list", "watch"}) {
      EXPECT_TRUE(rules.count({group_of(k.api_version), k.plural, verb}))
          << "deploy/kubernetes/clusterrole.yaml grants no " << verb << " on " << k.plural << " ("
          << k.read_for << ")";
    }
  }
}

}  // namespace
}  // namespace gpuaas
