// How a connection proves who it is and protects its traffic: credentials and TLS from
// NatsOptions onto nats.c's options. Private to bus/.
#pragma once

#include <nats/nats.h>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/nats_bus.hpp"

namespace gpuaas::bus {

// Errors name the option and the file at fault, never a secret.
Status apply_security(natsOptions* opts, const NatsOptions& o);

}  // namespace gpuaas::bus
