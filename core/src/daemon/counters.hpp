// What the daemon counts about its intake and its API, shared by its parts. Private to
// gpuaas_core.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "gpuaas/core/event_applier.hpp"
#include "gpuaas/core/intake_stats.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::core {

// Why an API request got no answer or an error; a bounded set, used as a metric label.
enum class ApiRefusal {
  kReplySubject,
  kInvalidUtf8,
  kHandlerError,
  kUnknownEndpoint,
  kBadRequest,
  kCount
};
std::string_view api_refusal_name(ApiRefusal reason);

struct DaemonCounters {
  // Registers the metrics with `registry`; without one, only the plain counts are kept.
  explicit DaemonCounters(telemetry::Registry* registry);

  IntakeStats stats;
  telemetry::Counter* redeliveries = nullptr;
  telemetry::Counter* gaps_deferred = nullptr;
  telemetry::Gauge* last_sequence = nullptr;
  telemetry::Histogram* action_latency = nullptr;
  // Of the last event applied: a snapshot records it, so a stream deleted and created again
  // under the same name is not taken for the one the snapshot covers.
  uint64_t last_data_hash = 0;
  telemetry::Counter* snapshots_written = nullptr;
  telemetry::Counter* snapshots_refused = nullptr;
  // The last snapshot's size, and how long each write held the intake (serialize and store).
  telemetry::Gauge* snapshot_bytes = nullptr;
  telemetry::Histogram* snapshot_write_seconds = nullptr;
  // API requests not answered or answered with an error, by reason.
  std::array<telemetry::Counter*, static_cast<std::size_t>(ApiRefusal::kCount)> api_refused{};
  std::atomic<uint64_t> api_refused_total{0};
};

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
