// JetStream KV for the NATS bus. Private to bus/.
#pragma once

#include <memory>

#include "gpuaas/bus/key_value.hpp"
#include "nats_connection.hpp"

namespace gpuaas::bus {

// Creates the bucket when missing (updates TTL, history, replicas, max value size otherwise).
Result<std::unique_ptr<KeyValue>> open_nats_kv(std::shared_ptr<Connection> conn,
                                               const KvSettings& settings);
Status delete_nats_kv(Connection& conn, const std::string& bucket);

}  // namespace gpuaas::bus
