// Durable streams and the consumers that read them (JetStream in the NATS bus).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::bus {

enum class Storage { kFile, kMemory };

// A durable, ordered log of messages on a set of subjects.
struct StreamSettings {
  std::string name;
  std::vector<std::string> subjects;
  Storage storage = Storage::kFile;
  int replicas = 1;
  std::chrono::seconds max_age{7 * 24 * 3600};  // 0: no limit
  int64_t max_bytes = -1;                       // -1: no limit
  std::chrono::seconds duplicate_window{120};   // Nats-Msg-Id deduplication
};

// A durable consumer that hands out a stream's messages in order and remembers what was acked.
struct ConsumerSettings {
  std::string stream;
  std::string durable;
  std::chrono::seconds ack_wait{30};
  int64_t max_ack_pending = 20000;
  // Batches fetched ahead while the caller works on the current one, so the server streams the
  // next batch during processing. 0: fetch only when asked.
  int prefetch_batches = 2;
  std::size_t fetch_batch = 512;
  std::chrono::milliseconds fetch_wait{200};
};

struct PublishAck {
  std::string stream;
  uint64_t sequence = 0;
  bool duplicate = false;  // the server already held a message with this msg id
};

// Where a durable consumer stands: everything at or below ack_floor is done; messages in
// (ack_floor, delivered] were handed out but not acknowledged.
struct ConsumerPosition {
  uint64_t ack_floor = 0;
  uint64_t delivered = 0;
  uint64_t stream_last = 0;
  uint64_t stream_first = 0;
};

// Messages fetched together. Views stay valid until the batch is destroyed.
class Batch {
 public:
  virtual ~Batch() = default;
  virtual std::size_t size() const = 0;
  virtual std::string_view subject(std::size_t i) const = 0;
  virtual std::string_view data(std::size_t i) const = 0;
  virtual std::optional<std::string_view> header(std::size_t i, std::string_view key) const = 0;
  virtual uint64_t stream_sequence(std::size_t i) const = 0;
  // Acknowledges the first `n` messages only (and all before them): the rest come again after
  // the consumer's ack wait. Call after they were applied.
  virtual Status ack_first(std::size_t n) = 0;
  // Acknowledges every message of the batch (and all before it).
  Status ack() { return ack_first(size()); }
};

}  // namespace gpuaas::bus
