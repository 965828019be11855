// Reads a plugin's descriptor and api table through their struct_size (never beyond it) and checks
// them against this host: sizes, ABI version, event schema, status, name, semver version, kinds
// and their kind_info (kind_info_check.hpp), capabilities.
#pragma once

#include <cstddef>

#include "gpuaas/host/workload_plugin.hpp"
#include "gpuaas/plugin/abi.h"
#include "refusal.hpp"

namespace gpuaas::host::plugin {

// The ABI 1.0 fields: a descriptor through `api`, an api table through `destroy`.
inline constexpr std::size_t kDescriptorV1Size =
    offsetof(gpuaas_plugin_descriptor, api) + sizeof(gpuaas_plugin_descriptor::api);
inline constexpr std::size_t kApiMinSize =
    offsetof(gpuaas_plugin_api, destroy) + sizeof(gpuaas_plugin_api::destroy);

struct CheckedDescriptor {
  PluginInfo info;          // name, version, status, schema, kinds, capabilities, ABI
  gpuaas_plugin_api api{};  // what api->struct_size covers; the rest stays NULL
};

Check check_descriptor(const gpuaas_plugin_descriptor* descriptor, CheckedDescriptor& out);

}  // namespace gpuaas::host::plugin
