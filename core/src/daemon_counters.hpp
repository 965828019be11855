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
};

}  // namespace gpuaas::core
