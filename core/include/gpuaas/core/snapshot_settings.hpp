// Snapshots of the daemon's state in a KV bucket (docs/operations.md#snapshots): a restart loads
// the latest and replays only the events after the stream sequence it covers.
#pragma once

#include <cstdint>
#include <string>

namespace gpuaas::core {

struct SnapshotSettings {
  // A snapshot after at least this many events since the last one (at the end of a batch, once
  // its output is stored and the batch acknowledged), and on a clean stop. 0: never; a restart
  // then replays the stream from its first event.
  uint64_t every_events = 10000;
  std::string bucket;  // empty: <ROOT>_SNAPSHOT
  int replicas = 1;    // of the bucket (3 on a 3-node NATS cluster)
  // A forked child serializes a copy-on-write image of the state, so the intake holds still only
  // for the fork; false serializes on the intake thread (as when a fork fails).
  bool fork = true;
};

}  // namespace gpuaas::core
