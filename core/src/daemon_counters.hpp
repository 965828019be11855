// What the daemon counts about its intake, shared by its parts (daemon.cpp, daemon_api.cpp).
// Private to gpuaas_core.
#pragma once

#include "gpuaas/core/daemon.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::core {

struct Daemon::Counters {
  IntakeStats stats;
  telemetry::Counter* redeliveries = nullptr;
  telemetry::Gauge* last_sequence = nullptr;
  telemetry::Histogram* action_latency = nullptr;
  // Of the last event applied: a snapshot records it, so a stream deleted and created again
  // under the same name is not taken for the one the snapshot covers.
  uint64_t last_data_hash = 0;
  telemetry::Counter* snapshots_written = nullptr;
  telemetry::Counter* snapshots_refused = nullptr;
};

}  // namespace gpuaas::core
