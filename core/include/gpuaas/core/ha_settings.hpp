// High availability: two or more gpuaasd on one subject root, one leading through a lease in a
// KV bucket, the others standing by (docs/operations.md#high-availability).
#pragma once

#include <chrono>
#include <string>

namespace gpuaas::core {

struct HaSettings {
  bool enabled = false;
  // The lease's bucket; empty: <ROOT>_LEADER. Its TTL is `lease_ttl`: a dead leader's key expires
  // after it, and a standby takes over within about lease_ttl + lease_ttl / 3.
  std::string bucket;
  std::chrono::milliseconds lease_ttl{10000};
  // Unique per process; empty: <hostname>-<pid>-<start time>.
  std::string holder_id;
  int replicas = 1;  // of the lease bucket (3 on a 3-node NATS cluster)
};

}  // namespace gpuaas::core
