// Typed plugin settings (what `pluginConfig.<name>` in gpuaasd's file holds): readers that name the
// key in their errors, so every plugin refuses a bad setting the same way at create().
#pragma once

#include <string>

#include "gpuaas/plugin/workload.hpp"

namespace gpuaas::plugin {

// A finite number from 0 to 100 (a GPU utilisation threshold, say); InvalidInput otherwise.
double config_percentage(const std::string& key, const Json& value);
// true or false; InvalidInput otherwise.
bool config_flag(const std::string& key, const Json& value);
// The "unknown setting" error, listing what is known.
[[noreturn]] void config_unknown(const std::string& key, const std::string& known);

}  // namespace gpuaas::plugin
