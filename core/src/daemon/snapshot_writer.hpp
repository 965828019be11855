// Stores snapshots on a thread of its own, one at a time, so that the intake pays neither for
// storing tens of megabytes in the snapshot bucket nor, when a forked child serializes the
// state (forked_work.hpp), for waiting on its bytes. Private to gpuaas_core.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "gpuaas/base/status.hpp"

namespace gpuaas::core {

class SnapshotWriter {
 public:
  // Stores one snapshot's bytes; called on the writer's thread.
  using Store = std::function<Status(const std::string& bytes)>;
  // After a store, with its outcome; called on the writer's thread.
  using Stored = std::function<void(const Status&, uint64_t sequence, std::size_t bytes)>;
  // Gives the snapshot's bytes; called on the writer's thread, before the store.
  using Produce = std::function<Result<std::string>()>;

  SnapshotWriter(Store store, Stored stored);
  // Finishes the store in flight, then stops.
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  // A store is in flight: the next snapshot waits for it rather than queue behind it.
  bool busy() const;
  // Hands the bytes of a snapshot covering `sequence` to the writer. false, and nothing done,
  // when a store is in flight.
  bool submit(std::string bytes, uint64_t sequence);
  // The same with bytes still to come: `produce` gives them on the writer's thread; when it
  // fails, nothing is stored and `stored` hears why.
  bool submit(Produce produce, uint64_t sequence);
  // Returns once no store is in flight.
  void wait_idle();

 private:
  struct Job {
    Produce produce;
    uint64_t sequence = 0;
  };
  void run();

  Store store_;
  Stored stored_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Job> job_;
  bool busy_ = false;  // a job handed over and not yet stored
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpuaas::core
