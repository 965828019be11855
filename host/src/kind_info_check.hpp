// Reads ABI 1.1's gpuaas_kind_info array of a descriptor (stepping by kind_info_size, reading of
// each element only what its struct_size covers) into the plugin's kinds, and checks each: a
// plural Kubernetes accepts, a known scope, a hold spec that can be applied, a pod label key, no
// unknown flag, a known binding (1.2; DEFAULT or an entry of 1.1 resolves by default_binding()).
// A 1.0 descriptor gets the defaults of kind_defaults.hpp instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpuaas/host/workload_plugin.hpp"
#include "gpuaas/plugin/abi.h"
#include "refusal.hpp"

namespace gpuaas::host::plugin {

// A descriptor of ABI 1.1 ends at kind_info_size; one of 1.0 at api.
inline constexpr std::size_t kDescriptorKindInfoSize =
    offsetof(gpuaas_plugin_descriptor, kind_info_size) +
    sizeof(gpuaas_plugin_descriptor::kind_info_size);
// ABI 1.1's gpuaas_kind_info: through flags.
inline constexpr std::size_t kKindInfoMinSize =
    offsetof(gpuaas_kind_info, flags) + sizeof(gpuaas_kind_info::flags);

// `d` is the descriptor as far as `size` covers (zeroed beyond); `info.kinds` holds the names.
Check read_kind_info(const gpuaas_plugin_descriptor& d, uint32_t size, PluginInfo& info);

}  // namespace gpuaas::host::plugin
