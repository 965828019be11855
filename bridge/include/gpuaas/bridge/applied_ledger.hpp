// What the bridge remembers across restarts about actions: the decision ids it already carried
// out and the highest leader epoch it has seen. Kept in a KV bucket (<ROOT>_BRIDGE) so a restarted
// bridge, or its replacement on another node, neither applies a decision twice nor takes orders
// from a replaced leader.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/bus/key_value.hpp"

namespace gpuaas::bridge {

class AppliedLedger {
 public:
  // kv: the bucket; nullptr keeps the ledger in memory only (tests, a bus without KV).
  explicit AppliedLedger(std::unique_ptr<bus::KeyValue> kv);

  // True when `decision_id` was recorded, by this process or an earlier one.
  Result<bool> seen(const std::string& decision_id);
  // Records it with what became of it (a short text kept as the value).
  Status record(const std::string& decision_id, const std::string& outcome);

  // The highest epoch seen so far (0 before any).
  Result<uint64_t> highest_epoch();
  // Raises the highest epoch to `epoch` when it is higher; never lowers it.
  Status raise_epoch(uint64_t epoch);

  // A random secret, made once per bucket and kept there, that prefixes the bridge's Nats-Msg-Ids:
  // tenants' submissions share the event stream's duplicate window, and an id a tenant could
  // compute (uid.resourceVersion.TYPE) could be sent first to make the stream drop the bridge's
  // event as a duplicate. Tenants cannot read the bucket. nullptr kv: one per process.
  Result<std::string> msg_id_salt();

  // The KV key of a decision id: characters other than A-Z a-z 0-9 _ - written as =HH, so every
  // id maps to one valid key and no two ids to the same one.
  static std::string key_of(const std::string& decision_id);

 private:
  std::unique_ptr<bus::KeyValue> kv_;
  std::mutex mu_;
  std::unordered_set<std::string> known_;
  std::optional<uint64_t> epoch_;
};

// The bucket under the configuration's root: <ROOT>_BRIDGE unless actions.stateBucket names one.
bus::KvSettings ledger_settings(const BridgeConfig& cfg);

}  // namespace gpuaas::bridge
