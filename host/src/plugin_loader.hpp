// The loading steps of one plugin library, in the order plugin_host.hpp's design note gives:
// permissions, manifest, checksum, dlopen, entry point, descriptor, manifest match, conflicts,
// create(). The first step that fails is the refusal.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/host/workload_plugin.hpp"
#include "plugin_metrics.hpp"
#include "refusal.hpp"

namespace gpuaas::host::plugin {

struct LoadContext {
  const PluginHostOptions& options;
  const PluginMetrics& metrics;
  const std::vector<std::unique_ptr<WorkloadPlugin>>& loaded;  // for name and kind conflicts
};

Check load_plugin(const std::filesystem::path& library, const LoadContext& context,
                  std::unique_ptr<WorkloadPlugin>& out);

}  // namespace gpuaas::host::plugin
