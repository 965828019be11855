// In-process Bus: streams, consumers and subscriptions in memory, for `--server embedded`, the
// simulator and the demo. Same semantics as the NATS bus where it matters: stored messages are
// ordered per stream, msg ids deduplicate within the stream's window (by count of ids, since
// there is no clock here), subscribers are called synchronously on the publishing thread.
// KV buckets keep the latest value of each key with revisions, compare-and-set and a TTL measured
// on the steady clock (like the server's), and refuse values above 1 MB like a default server.
#pragma once

#include <memory>

#include "gpuaas/bus/bus.hpp"

namespace gpuaas::bus {

std::unique_ptr<Bus> make_memory_bus();

// Wildcard matching as NATS does it: '*' one token, '>' the rest.
bool subject_matches(std::string_view pattern, std::string_view subject);

}  // namespace gpuaas::bus
