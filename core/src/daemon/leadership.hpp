// High availability: the daemon leads through a lease (core/src/ha/) or stands by. A standby
// follows the event stream with a reader of its own, never the leader's work consumer, so its
// model is current when it takes over; it holds its output until then, dropping what the
// leader's acknowledgements show was already published. Without HA (start() not called) the
// daemon always leads and holds nothing. Private to gpuaas_core.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "daemon/context.hpp"
#include "daemon/output.hpp"
#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"

namespace gpuaas::core {

class Leadership {
 public:
  // Applies one batch read from the event stream to the model (the intake's apply_batch).
  using ApplyBatch = std::function<void(bus::Batch&)>;

  explicit Leadership(DaemonContext& ctx);
  ~Leadership();
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  // Opens the lease bucket and starts keeping the lease (config().ha).
  Status start();
  // Stops keeping the lease and releases it; safe when never started.
  void stop();
  bool enabled() const { return state_ != nullptr; }
  bool leading() const;
  uint64_t epoch() const;

  // Follows the stream until this process leads or the daemon stops.
  void stand_by(const ApplyBatch& apply);
  // One round of following: read what is new, apply it, hold the output.
  Status follow_once(const ApplyBatch& apply);
  // Standby to leader: takes the epoch, catches up with the stream and publishes the held
  // output of events the old leader had not acknowledged. The caller then opens the work.
  Status take_over(const ApplyBatch& apply);
  // Output leaves only once this process leads and its work is open (ready()).
  void ready() { ready_ = true; }
  // Leader to standby, after the lease was lost: output is held again until the next take-over.
  void step_down();
  bool holding() const { return state_ != nullptr && !ready_; }
  void hold(std::vector<PendingOutput>& out);

 private:
  struct State;
  DaemonContext& ctx_;
  std::unique_ptr<State> state_;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<bool> ready_{false};
};

}  // namespace gpuaas::core
