#include "gpuaas/bridge/cluster_role.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace gpuaas::bridge {
namespace {

using Grant = std::tuple<std::string, std::string, std::string>;  // group, resource, verb

const std::vector<std::string> kRead = {"get", "list", "watch"};
const std::vector<std::string> kReadPatch = {"get", "list", "watch", "patch"};
const std::vector<std::string> kReadPatchDelete = {"get", "list", "watch", "patch", "delete"};

// Why the bridge watches a kind the core consumes; the comment above its rule.
std::string why_watched(const ResourceConfig& r) {
  if (r.kind == "Node") return "Nodes: watched; patched to cordon (spec.unschedulable).";
  if (r.kind == "Pod")
    return "Pods: watched (every Pod counts on its node); patched (scheduling gates opened, "
           "narrowed to the planned node), evicted when draining, and deleted when a plain Pod "
           "is preempted (the pod plugin).";
  if (r.kind == "MachineSet")
    return "Cluster API: MachineSets watched and scaled through /scale (below).";
  return r.kind + ": watched; the core's model reads it.";
}

// What the bridge writes besides merge patches on the kinds it watches.
std::vector<RbacRule> fixed_rules() {
  return {
      {"Draining a node evicts its pods.", "", {"pods/eviction"}, {"create"}},
      {"Scale-out (docs/scale-out.md): a ProvisioningRequest names a PodTemplate of the pods to "
       "fit.",
       "",
       {"podtemplates"},
       {"create", "delete"}},
      {"", "autoscaling.x-k8s.io", {"provisioningrequests"}, {"create", "delete"}},
      {"A Kubernetes Event per decision, so `kubectl describe` shows it (both Event APIs).",
       "",
       {"events"},
       {"create"}},
      {"", "events.k8s.io", {"events"}, {"create"}},
      {"", "cluster.x-k8s.io", {"machinesets/scale"}, {"get", "patch", "update"}},
      {"A Machine gets the delete-machine annotation so that scale-down removes the idle one.",
       "cluster.x-k8s.io",
       {"machines"},
       kReadPatch},
  };
}

bool claimed(const std::vector<host::PluginInfo>& plugins, const std::string& group,
             const std::string& kind) {
  for (const auto& p : plugins) {
    for (const auto& k : p.kinds) {
      if (k.group == group && k.kind == kind) return true;
    }
  }
  return false;
}

void note(std::set<Grant>& granted, const RbacRule& r) {
  for (const auto& res : r.resources) {
    for (const auto& v : r.verbs) granted.insert({r.api_group, res, v});
  }
}

bool covered(const std::set<Grant>& granted, const std::string& group, const std::string& res,
             const std::vector<std::string>& verbs) {
  return std::all_of(verbs.begin(), verbs.end(), [&](const std::string& v) {
    return granted.count({group, res, v}) > 0;
  });
}

std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

}  // namespace

std::vector<RbacRule> bridge_rbac_rules(const std::vector<ResourceConfig>& resources,
                                        const std::vector<host::PluginInfo>& plugins) {
  std::vector<RbacRule> rules;
  std::set<Grant> granted;
  auto add = [&](RbacRule r) {
    note(granted, r);
    rules.push_back(std::move(r));
  };
  for (const auto& r : resources) {
    if (!r.watch) continue;
    const std::string group(api_group_of(r.api_version));
    const bool patched = r.kind == "Node" || r.kind == "Pod" || claimed(plugins, group, r.kind);
    // A plain Pod cannot be held again once running: its plugin stops it by deleting it.
    const bool deleted = r.kind == "Pod" && group.empty() && claimed(plugins, "", "Pod");
    const auto& verbs = deleted ? kReadPatchDelete : (patched ? kReadPatch : kRead);
    if (covered(granted, group, r.plural, verbs)) continue;
    add({why_watched(r), group, {r.plural}, verbs});
  }
  for (auto& r : fixed_rules()) add(std::move(r));

  // The plugins' kinds, one rule per API group: watched, then held, admitted, suspended and
  // scaled by merge patch.
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> by_group;
  for (const auto& p : plugins) {
    for (const auto& k : p.kinds) {
      if (covered(granted, k.group, k.plural, kReadPatch)) continue;
      by_group[k.group].first.insert(k.plural);
      by_group[k.group].second.insert(p.name);
    }
  }
  for (const auto& [group, what] : by_group) {
    std::vector<std::string> names(what.second.begin(), what.second.end());
    std::string why = (names.size() == 1 ? "Plugin " : "Plugins ") + names[0];
    for (std::size_t i = 1; i < names.size(); ++i) why += ", " + names[i];
    why += ": the kinds watched, then held, admitted, suspended and scaled by merge patch.";
    add({why, group, {what.first.begin(), what.first.end()}, kReadPatch});
  }
  return rules;
}

std::string cluster_role_yaml(const std::vector<RbacRule>& rules) {
  std::string out =
      "apiVersion: rbac.authorization.k8s.io/v1\n"
      "kind: ClusterRole\n"
      "metadata:\n"
      "  name: gpuaas-bridge\n"
      "  labels:\n"
      "    app.kubernetes.io/part-of: gpuaas\n"
      "rules:\n";
  for (const auto& r : rules) {
    if (!r.why.empty()) out += "# " + r.why + "\n";
    out += "- apiGroups: [" + (r.api_group.empty() ? std::string("\"\"") : r.api_group) + "]\n";
    out += "  resources: " + list(r.resources) + "\n";
    out += "  verbs: " + list(r.verbs) + "\n";
  }
  return out;
}

}  // namespace gpuaas::bridge
