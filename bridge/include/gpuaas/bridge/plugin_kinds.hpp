// The workload kinds the bridge serves come from the plugins, not from a table of its own: each
// kind a loaded plugin claims is watched (its first version; further versions of the same group
// and kind are only acted on, since the API server serves one object under every version), and
// held by the webhook as the kind's declaration says. So a kind the bridge holds always has a
// plugin that releases it, and a new plugin needs no bridge change.
#pragma once

#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/host/workload_plugin.hpp"

namespace gpuaas::bridge {

// Every plugin kind as a resource: watched for the first version of each (group, kind), acted on
// only for the others.
std::vector<ResourceConfig> plugin_resources(const std::vector<host::PluginInfo>& plugins);

// The hold rule of every plugin kind that declares a hold, one per (group, kind): the first
// version's.
std::vector<HoldRule> plugin_hold_rules(const std::vector<host::PluginInfo>& plugins);

// cfg.resources gains each plugin kind it does not name (a configured entry of the same
// apiVersion and kind wins; a kind already watched in another version is added act-only);
// cfg.webhook.holds becomes the plugins' rules with the configuration's `webhook.holds:` over them
// by kind.
void apply_plugin_kinds(BridgeConfig& cfg, const std::vector<host::PluginInfo>& plugins);

// The plugins of `dir`, loaded and checked as gpuaasd loads them (permissions, manifest, ABI).
// A refused library is logged and left out; an unreadable directory is an error.
Result<std::vector<host::PluginInfo>> load_plugins(const std::string& dir);

}  // namespace gpuaas::bridge
