// Counts kept by the intake, shown by `gpuaasctl state` and exported as metrics.
#pragma once

#include <cstdint>

namespace gpuaas::core {

struct IntakeStats {
  uint64_t events_applied = 0;        // taken from the stream once each: applied or dead-lettered
  uint64_t events_replayed = 0;       // applied while rebuilding the model at start
  uint64_t redeliveries_skipped = 0;  // delivered again after being applied: skipped
  uint64_t deadlettered = 0;
  // Events that came after a gap the stream could not fill at once: left for redelivery.
  uint64_t gaps_deferred = 0;
  uint64_t last_applied_sequence = 0;  // stream sequence of the last event applied
  uint64_t batches = 0;
  uint64_t snapshot_sequence = 0;  // covered by the last snapshot this process wrote or loaded
  uint64_t snapshots_written = 0;
  uint64_t snapshots_refused = 0;  // found but unusable (another version, damaged)
  uint64_t snapshot_bytes = 0;     // of the last one
  // Outcomes of actions reported back by the applier (ActionResult events): applied, conflict,
  // failed, dropped. Counted since this process started.
  uint64_t action_results_applied = 0;
  uint64_t action_results_conflict = 0;
  uint64_t action_results_failed = 0;
  uint64_t action_results_dropped = 0;
};

}  // namespace gpuaas::core
