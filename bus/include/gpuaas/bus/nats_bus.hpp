// The NATS implementation of Bus (core NATS + JetStream through nats.c).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "gpuaas/bus/bus.hpp"

namespace gpuaas::bus {

struct NatsOptions {
  std::string url = "nats://127.0.0.1:4222";
  std::string name = "gpuaas";  // connection name, shown by the server's monitoring
  std::chrono::milliseconds connect_timeout{2000};
  // true: start even when the server is not up yet and keep trying (the daemon);
  // false: fail at once (the CLI, which must exit 3).
  bool retry_on_failed_connect = false;
  int max_reconnect = -1;  // -1: forever
  std::chrono::milliseconds reconnect_wait{250};
  std::chrono::milliseconds request_timeout{5000};  // JetStream API calls
  int64_t max_pending_async_publishes = 4000;
};

// Connects; the returned bus owns the connection. Errors are kUnavailable with the URL named.
Result<std::unique_ptr<Bus>> connect_nats(const NatsOptions& options);

}  // namespace gpuaas::bus
