// The ClusterRole gpuaas-bridge needs for a set of plugins (`gpuaas-bridge rbac --plugins DIR`):
// the rules for what the core consumes and the bridge itself writes (Nodes, Pods, evictions,
// Events, scale-out), and get/list/watch/patch on every plugin kind, one rule per API group.
// deploy/kubernetes/clusterrole.yaml is this command's output; the manifests test compares them.
#pragma once

#include <string>
#include <vector>

#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/host/workload_plugin.hpp"

namespace gpuaas::bridge {

struct RbacRule {
  std::string why;  // the comment above the rule
  std::string api_group;
  std::vector<std::string> resources;
  std::vector<std::string> verbs;
};

// Every rule, in order: the watched kinds of `resources` that no plugin claims, the fixed rules
// of the bridge's own writes, then the plugins' kinds. A grant an earlier rule gives is not
// repeated, so that every rule is needed.
std::vector<RbacRule> bridge_rbac_rules(const std::vector<ResourceConfig>& resources,
                                        const std::vector<host::PluginInfo>& plugins);

// The ClusterRole "gpuaas-bridge" as YAML, each rule under its comment.
std::string cluster_role_yaml(const std::vector<RbacRule>& rules);

}  // namespace gpuaas::bridge
