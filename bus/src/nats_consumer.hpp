// Pull consumers over nats.c: batches in stream order, and a wrapper that fetches ahead.
// Private to bus/.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "gpuaas/bus/bus.hpp"
#include "nats_connection.hpp"

namespace gpuaas::bus {

// Takes ownership of `sub`. An ephemeral consumer's name is deleted from the server at the end.
std::unique_ptr<Consumer> make_pull_consumer(std::shared_ptr<Connection> conn,
                                             natsSubscription* sub, bool ackable,
                                             std::string stream, std::string ephemeral);
// Fetches `depth` batches ahead of the caller on its own thread.
std::unique_ptr<Consumer> make_prefetching_consumer(std::unique_ptr<Consumer> inner, int depth,
                                                    std::size_t batch,
                                                    std::chrono::milliseconds wait);

}  // namespace gpuaas::bus
