// Leader election for two (or more) gpuaasd: whoever holds one key of a KV bucket leads. The
// bucket's TTL bounds how long a dead leader keeps the key, so a standby takes over within the
// TTL plus one renew period. The caller paces the calls (a renew every TTL/3, say): this class
// reads no clock.
#pragma once

#include <cstdint>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/key_value.hpp"

namespace gpuaas::core::ha {

struct LeaseState {
  bool leader = false;
  // The key's revision when this holder became leader: strictly increasing from one leader to
  // the next (KV revisions never go back), so actions stamped with it can be fenced. 0: standby.
  uint64_t epoch = 0;
  uint64_t revision = 0;  // the key's latest revision this holder knows (0: absent)
  std::string holder;     // who holds the key; empty when nobody does
};

class LeaderLease {
 public:
  // holder_id must be unique per process (host, pid, start): two processes with one id would
  // both believe they lead.
  LeaderLease(bus::KeyValue& kv, std::string key, std::string holder_id);

  // Leader: renews (update at the last revision); a lost compare-and-set means someone else took
  // the key after it expired, and this holder is standby from then on. Standby: creates the key
  // when absent (leads from that revision) and otherwise stays standby.
  // An error (server unreachable) changes nothing: a leader that cannot renew for a whole TTL
  // must stop acting on its own, since the standby will take over.
  Result<LeaseState> try_acquire_or_renew();

  // Deletes the key if this holder still holds it, so a standby takes over at its next attempt
  // rather than after the TTL. Standby: nothing to do.
  Status release();

  const LeaseState& state() const { return state_; }
  const std::string& holder_id() const { return holder_id_; }

 private:
  Result<LeaseState> observe();  // standby: read who holds the key

  bus::KeyValue& kv_;
  std::string key_;
  std::string holder_id_;
  LeaseState state_;
};

}  // namespace gpuaas::core::ha
