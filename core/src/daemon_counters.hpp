// What the daemon counts about its intake, shared by its parts (daemon.cpp, daemon_api.cpp).
// Private to gpuaas_core.
#pragma once

#include <array>
#include <atomic>
#include <string_view>

#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/event_applier.hpp"
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
  // API requests not answered or answered with an error, by Daemon::kApi* reason.
  std::array<telemetry::Counter*, kApiReasons> api_refused{};
  std::atomic<uint64_t> api_refused_total{0};
};

std::string_view api_refusal_name(int reason);

// The intake's counts with the applier's tally of action results.
inline IntakeStats with_action_results(IntakeStats s, const EventApplier& applier) {
  const auto& r = applier.action_results();
  s.action_results_applied = r[1];
  s.action_results_conflict = r[2];
  s.action_results_failed = r[3];
  s.action_results_dropped = r[4];
  return s;
}

}  // namespace gpuaas::core
