// A key-value bucket on the bus (JetStream KV in the NATS bus): daemon snapshots and the HA
// leader lease live here. Every write gets a revision, strictly increasing within the bucket,
// which makes compare-and-set (create, update) possible.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/stream.hpp"

namespace gpuaas::bus {

struct KvSettings {
  std::string bucket;  // A-Z a-z 0-9 _ -
  int replicas = 1;
  // Age after which a value disappears (every write restarts it). Bucket-wide: nats.c 3.4.1 and
  // nats-server 2.9 have no per-key TTL. 0: values never expire.
  std::chrono::seconds ttl{0};
  int history = 1;  // values kept per key (1..64)
  Storage storage = Storage::kFile;
  // Largest value the bucket accepts; -1: whatever the server accepts (its max_payload, 1 MB by
  // default in nats-server 2.9). A larger value must be split: put_chunked().
  int64_t max_value_size = -1;
};

struct KvEntry {
  std::string value;
  uint64_t revision = 0;
};

// Keys: A-Z a-z 0-9 and - _ / \ = . (dots separate tokens; no empty token).
// Errors: kInvalidInput for a bad key or an oversized value (the message names both limits),
// kConflict when a compare-and-set loses, kUnavailable when the server does not answer.
class KeyValue {
 public:
  virtual ~KeyValue() = default;

  // The latest value; nullopt when the key is absent, deleted or expired.
  virtual Result<std::optional<KvEntry>> get(const std::string& key) = 0;
  // Writes unconditionally; returns the new revision.
  virtual Result<uint64_t> put(const std::string& key, std::string_view value) = 0;
  // Writes only when the key is absent (never written, deleted or expired); kConflict otherwise.
  virtual Result<uint64_t> create(const std::string& key, std::string_view value) = 0;
  // Writes only when the key's latest revision is last_revision; kConflict otherwise (someone
  // wrote, deleted, or the value expired since).
  virtual Result<uint64_t> update(const std::string& key, std::string_view value,
                                  uint64_t last_revision) = 0;
  // Deletes the key (a delete marker: a later create() succeeds). Absent keys are fine.
  // With last_revision > 0, deletes only when that is still the key's latest revision
  // (kConflict otherwise): a lease holder releases its lease, never its successor's.
  virtual Status remove(const std::string& key, uint64_t last_revision = 0) = 0;

  // The largest value put() accepts, in bytes.
  virtual int64_t max_value_size() const = 0;
  const std::string& bucket() const { return bucket_; }

 protected:
  explicit KeyValue(std::string bucket) : bucket_(std::move(bucket)) {}

 private:
  std::string bucket_;
};

// kInvalidInput naming the key and the bucket when `key` is not a valid KV key.
Status check_kv_key(const std::string& bucket, std::string_view key);
// kInvalidInput when `bucket` is not a valid bucket name.
Status check_kv_bucket(std::string_view bucket);

// Values larger than max_value_size(): stored as chunks `<key>.<generation>.<i>` and a small
// manifest under `<key>` written last, so a reader never sees half of a value. The chunks of the
// previous value are deleted after the manifest moved on. Returns the manifest's revision.
// Not for concurrent writers of one key (the snapshot has one writer: the leader).
Result<uint64_t> put_chunked(KeyValue& kv, const std::string& key, std::string_view value);
// Reads what put_chunked() wrote (or a plain put()'s value); nullopt when absent. The revision is
// the manifest's. kUnavailable when a chunk vanished under the reader (retry).
Result<std::optional<KvEntry>> get_chunked(KeyValue& kv, const std::string& key);

}  // namespace gpuaas::bus
