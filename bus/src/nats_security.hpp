// How a connection proves who it is and protects its traffic: credentials and TLS from
// NatsOptions onto nats.c's options. Private to bus/.
#pragma once

#include <nats/nats.h>

#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/nats_bus.hpp"

namespace gpuaas::bus {

// Errors name the option and the file at fault, never a secret.
Status apply_security(natsOptions* opts, const NatsOptions& o);

// What the server's refusal cannot say, for the error: the server answers every refused JWT
// login with the same "Authorization Violation", so this names the credentials file and whether
// its user JWT has expired by this host's clock. Empty without a credentials file.
std::string refused_login_hint(const NatsOptions& o);

}  // namespace gpuaas::bus
