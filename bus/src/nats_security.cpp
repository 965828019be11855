#include "nats_security.hpp"

namespace gpuaas::bus {

// Plain connections carry no credentials yet; authentication and TLS options come next (#9).
Status apply_security(natsOptions*, const NatsOptions&) { return Status::ok(); }

}  // namespace gpuaas::bus
