// What the daemon sends after applying events: the decisions' actions and status events, and the
// applier's dead letters, each with the stream sequence of the event that caused it. The kind
// travels with the message, so the output path never parses the subject it was built with.
// Private to gpuaas_core.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/message.hpp"
#include "gpuaas/core/decision_pipeline.hpp"

namespace gpuaas::core {

struct PendingOutput {
  bus::Message message;
  uint64_t sequence = 0;  // of the event that caused it; 0: none
  bool action = false;    // an Action (epoch-stamped, timed by the latency histogram)
  bool stored = false;    // kept by a stream (actions, dead letters): published with its id
};

PendingOutput pending_decision(Outbound out, uint64_t sequence);
// The applier's dead letters (EventApplier::take_deadletters()).
std::vector<PendingOutput> pending_deadletters(
    std::vector<std::pair<bus::Message, uint64_t>> deadletters);

// Publishes one output message. What a stream keeps is stored with its ce-id as Nats-Msg-Id, and
// `stored` is set: the caller then waits for the stream's acks (Bus::wait_stored).
Status publish_output(bus::Bus& bus, const PendingOutput& out, bool& stored);

}  // namespace gpuaas::core
