// Raw nats.c throughput, the ceilings the daemon's intake is measured against (gpuaas-bench bus).
// Here because only bus/ speaks nats.c.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/message.hpp"
#include "gpuaas/bus/stream.hpp"

namespace gpuaas::bus {

// Core NATS: one connection subscribes, another publishes `count` copies of `msg` (headers and
// body, on its subject); messages per second from the first publish to the last delivery.
Result<double> measure_core_rate(const std::string& url, const Message& msg, int64_t count);

// Fills `stream` (created fresh) with `count` copies of `msg` using pipelined JetStream
// publishes; returns messages per second stored.
Result<double> fill_stream(const std::string& url, const StreamSettings& stream, const Message& msg,
                           int64_t count);

// A durable pull consumer (AckAll, acking the last message of each batch, as the daemon does)
// fetching `count` messages in batches of `batch`; returns messages per second.
Result<double> measure_fetch_ack_rate(const std::string& url, const std::string& stream,
                                      const std::string& durable, int64_t count, int batch);

}  // namespace gpuaas::bus
