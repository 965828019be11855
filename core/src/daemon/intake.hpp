// The core event loop: events from the bus, in stream order, decoded and applied to the cluster
// model, their output published, then acknowledged. Bad input goes to the dead-letter subject
// with its reason and is acknowledged too, so that nothing blocks the stream and nothing is lost
// silently. Private to gpuaas_core.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "daemon/context.hpp"
#include "daemon/leadership.hpp"
#include "daemon/output.hpp"
#include "daemon/recovery.hpp"
#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"

namespace gpuaas::core {

class Intake {
 public:
  // `leadership` tells whether output is held (a standby) and whether this process still
  // leads; `recovery` writes the snapshots that follow the intake.
  Intake(DaemonContext& ctx, Leadership& leadership, Recovery& recovery);

  // Opens the work consumer (the leader's, after recovery).
  Status open_consumer();
  // One fetch-apply-ack round; how many messages it took.
  Result<std::size_t> step(std::chrono::milliseconds wait);
  // Runs rounds as the leader until the daemon stops (ok) or loses the lease (unavailable: the
  // work consumer is closed then, and the caller stands by).
  Status run();
  // Applies messages up to stream sequence `limit` and publishes (or holds) their output; the
  // output of those at or below `quiet_floor` is not published again (it was, before a
  // restart). How many of the batch's messages were taken (applied or skipped as
  // redeliveries): fewer than all when one came after a gap the stream could not fill yet.
  std::size_t apply_batch(bus::Batch& batch, uint64_t limit, uint64_t quiet_floor, bool replay);

 private:
  using ApplyOne = std::function<void(std::string_view, std::string_view, uint64_t)>;
  bool fill_gap(uint64_t next, const ApplyOne& apply);
  // Output leaves before the ack: a crash in between repeats it, never loses it.
  void publish(const std::vector<PendingOutput>& deadletters,
               const std::vector<PendingOutput>& decisions, uint64_t quiet_floor,
               std::chrono::steady_clock::time_point received);

  DaemonContext& ctx_;
  Leadership& leadership_;
  Recovery& recovery_;
  std::unique_ptr<bus::Consumer> consumer_;
};

}  // namespace gpuaas::core
