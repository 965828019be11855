// How a new process gets its state back: the latest snapshot of the daemon's state, then the
// events after it, replayed. Snapshots live in a KV bucket, one key per work consumer (its
// durable name): the snapshot pairs with that consumer's position. Private to gpuaas_core.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/context.hpp"
#include "daemon/snapshot_writer.hpp"
#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/key_value.hpp"

namespace gpuaas::core {

class Recovery {
 public:
  // Replays one batch: applies its events up to stream sequence `limit`; the output of those at
  // or below `quiet_floor` is not published again (it was, before the restart).
  using Replay = std::function<void(bus::Batch&, uint64_t limit, uint64_t quiet_floor)>;

  explicit Recovery(DaemonContext& ctx);
  ~Recovery();
  Recovery(const Recovery&) = delete;
  Recovery& operator=(const Recovery&) = delete;

  // Rebuilds the empty model up to where the previous incarnation stopped.
  Status recover(const Replay& replay);
  // Writes a snapshot of everything applied (nothing when snapshots are off or it would cover
  // what the last one does), after the store in flight if any; with the model unlocked: takes
  // the lock itself. Returns once it is stored.
  Status save_snapshot();
  // When enough events were applied since the last snapshot (config().snapshots): serializes
  // one here and stores it on the writer's thread, after the store in flight if any.
  void maybe_snapshot();
  // Returns once the snapshot handed to the writer, if any, is stored (or failed).
  void wait_stored();

 private:
  Status open_snapshots();
  // Loads the latest snapshot into the empty model; the sequence it covers, 0 when there is
  // none it can use (the caller then replays from the stream's start).
  uint64_t load_snapshot(uint64_t stream_last);
  std::string covers_stream_event(uint64_t seq, uint64_t data_hash);
  struct Serialized {
    std::string bytes;
    uint64_t sequence = 0;  // the stream sequence it covers
  };
  // The state now, unless the last snapshot covers it already.
  std::optional<Serialized> serialize();
  // Forks a child that serializes the state now and hands it to the writer; false when it
  // could not fork (the caller then serializes in place).
  bool fork_snapshot();
  std::size_t reserve_size() const;
  void observe_held(std::chrono::steady_clock::time_point start) const;
  bool snapshot_due() const;
  Status store(const std::string& bytes);
  void stored(uint64_t sequence, std::size_t bytes);  // counts a stored snapshot

  DaemonContext& ctx_;
  std::unique_ptr<bus::KeyValue> snapshots_;
  // The last snapshot's size, to reserve the next one's; the writer's thread sets it too.
  std::atomic<std::size_t> last_bytes_{0};
  std::unique_ptr<SnapshotWriter> writer_;  // after snapshots_: stops before the bucket closes
};

}  // namespace gpuaas::core
