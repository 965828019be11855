#include "gpuaas/bridge/plugin_kinds.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <set>
#include <utility>

#include "gpuaas/host/plugin_host.hpp"

namespace gpuaas::bridge {
namespace {

using GroupKind = std::pair<std::string, std::string>;

std::optional<HoldRule> hold_rule(const host::PluginKind& k) {
  switch (k.hold.type) {
    case host::KindHold::Type::kSetTrue:
      return HoldRule::set_true(k.group, k.kind, k.hold.target);
    case host::KindHold::Type::kAnnotation:
      return HoldRule::annotation(k.group, k.kind, k.hold.target, k.hold.value, k.hold.any_value);
    case host::KindHold::Type::kSchedulingGate:
      return HoldRule::scheduling_gate(k.group, k.kind, k.hold.target);
    case host::KindHold::Type::kNone:
      break;
  }
  return std::nullopt;
}

bool watched_in_any_version(const std::vector<ResourceConfig>& resources, const GroupKind& gk) {
  for (const auto& r : resources) {
    if (r.watch && r.kind == gk.second && std::string(api_group_of(r.api_version)) == gk.first)
      return true;
  }
  return false;
}

}  // namespace

std::vector<ResourceConfig> plugin_resources(const std::vector<host::PluginInfo>& plugins) {
  std::vector<ResourceConfig> out;
  std::set<GroupKind> seen;
  for (const auto& p : plugins) {
    for (const auto& k : p.kinds) {
      const bool first = seen.insert({k.group, k.kind}).second;
      out.push_back({k.api_version(), k.kind, k.plural, k.namespaced, first});
    }
  }
  return out;
}

std::vector<HoldRule> plugin_hold_rules(const std::vector<host::PluginInfo>& plugins) {
  std::vector<HoldRule> out;
  std::set<GroupKind> seen;
  for (const auto& p : plugins) {
    for (const auto& k : p.kinds) {
      if (!seen.insert({k.group, k.kind}).second) continue;
      if (auto rule = hold_rule(k)) out.push_back(std::move(*rule));
    }
  }
  return out;
}

void apply_plugin_kinds(BridgeConfig& cfg, const std::vector<host::PluginInfo>& plugins) {
  for (auto r : plugin_resources(plugins)) {
    if (cfg.resource(r.api_version, r.kind) != nullptr) continue;
    if (r.watch &&
        watched_in_any_version(cfg.resources, {std::string(api_group_of(r.api_version)), r.kind})) {
      r.watch = false;
    }
    cfg.resources.push_back(std::move(r));
  }
  cfg.webhook.holds = with_overrides(plugin_hold_rules(plugins), cfg.webhook.hold_overrides);
}

Result<std::vector<host::PluginInfo>> load_plugins(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::not_found("plugins: " + dir + " is not a directory");
  // Only the descriptors are needed; the instances die with this host, the libraries stay loaded
  // (the host never unloads one).
  host::PluginHost plugin_host;
  const auto refusals = plugin_host.load_directory(dir);
  auto plugins = plugin_host.plugins();
  spdlog::info("plugins from {}: {} loaded, {} refused", dir, plugins.size(), refusals.size());
  return plugins;
}

}  // namespace gpuaas::bridge
