// The hold rules the bridge takes from this build's plugins (build/plugins): what the webhook
// holds in a deployment. A Pod rule is added as the pod plugin declares it (scheduling gate
// kueue.x-k8s.io/admission), so the gate tests do not depend on that plugin being built.
// Header-only: GPUAAS_BIN_DIR is a test executable's definition.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "gpuaas/bridge/plugin_kinds.hpp"
#include "gpuaas/bridge/workload_hold.hpp"

namespace gpuaas::bridge {

inline const std::vector<host::PluginInfo>& built_plugins() {
  static const std::vector<host::PluginInfo> plugins = [] {
    auto loaded = load_plugins(std::string(GPUAAS_BIN_DIR) + "/../plugins");
    EXPECT_TRUE(loaded) << loaded.status().message();
    return loaded ? *loaded : std::vector<host::PluginInfo>();
  }();
  return plugins;
}

inline std::vector<HoldRule> built_plugin_rules() {
  auto rules = plugin_hold_rules(built_plugins());
  if (find_hold_rule(rules, "", "Pod") == nullptr)
    rules.push_back(HoldRule::scheduling_gate("", "Pod", kAdmissionGate));
  return rules;
}

}  // namespace gpuaas::bridge
