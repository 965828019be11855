// The daemon's part in high availability, shared by daemon.cpp and daemon_leadership.cpp.
// Private to gpuaas_core.
#pragma once

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "gpuaas/bus/key_value.hpp"
#include "gpuaas/core/daemon.hpp"
#include "ha/leader_lease.hpp"
#include "ha/lease_keeper.hpp"

namespace gpuaas::core {

struct Daemon::Leadership {
  std::unique_ptr<bus::KeyValue> kv;
  std::unique_ptr<ha::LeaderLease> lease;
  std::unique_ptr<ha::LeaseKeeper> keeper;
  std::unique_ptr<bus::Consumer> reader;  // standby: the event stream from last applied + 1
  std::vector<std::pair<bus::Message, uint64_t>> held;  // standby output, by stream sequence
  std::chrono::steady_clock::time_point trimmed{};
};

}  // namespace gpuaas::core
