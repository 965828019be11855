// What a WorkloadPlugin holds. The library is declared first so that it is released last: the
// instance is destroyed (api.destroy) while the code is mapped.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "gpuaas/host/workload_plugin.hpp"
#include "gpuaas/plugin/abi.h"
#include "plugin_metrics.hpp"

namespace gpuaas::host {

struct WorkloadPlugin::Impl {
  std::shared_ptr<const void> library;  // keeps the code loaded
  gpuaas_plugin_api api{};              // zeroed beyond the plugin's struct_size
  gpuaas_plugin* instance = nullptr;    // from api.create; destroyed by ~WorkloadPlugin
  PluginInfo info;                      // fixed parts; the counters below are the live ones
  uint32_t max_consecutive_failures = 5;
  plugin::PluginSeries metrics;

  std::mutex call_mutex;           // one call at a time (the ABI's promise to plugins)
  mutable std::mutex state_mutex;  // the fields below; taken after call_mutex, never before
  uint64_t calls = 0;
  uint64_t errors = 0;
  uint32_t failures_in_a_row = 0;
  bool disabled = false;
  std::string disabled_reason;
};

}  // namespace gpuaas::host
