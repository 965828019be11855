// The nats-server a benchmark measures against: the one given, or one it starts on 127.0.0.1.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gpuaas/bus/nats_server_process.hpp"

namespace gpuaas::bench {

// The URL of `given`, else of a nats-server started now and owned by `started`. Empty when it
// could not start; the reason is on stderr after `who`.
std::string bench_server_url(const std::optional<std::string>& given,
                             std::unique_ptr<bus::NatsServerProcess>& started, const char* who);

}  // namespace gpuaas::bench
