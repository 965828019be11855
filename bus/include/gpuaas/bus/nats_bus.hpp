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

  // Who the connection is (docs/security.md). At most one of user/password, token, nkey and
  // credentials file. Secrets are best given as files; a secret's value is never logged or put
  // into an error message. A URL with user:password@ in it is refused for the same reason.
  std::string user;
  std::string password;  // or password_file (its first line)
  std::string password_file;
  std::string token;  // or token_file (its first line)
  std::string token_file;
  std::string nkey;  // the user's public NKey (U...), with nkey_seed_file
  std::string nkey_seed_file;
  std::string credentials_file;  // a .creds file (JWT and seed), as nsc writes it
  // TLS: any of these turns TLS on (so does a tls:// URL). ca: trusted CA bundle (PEM);
  // cert/key: the client certificate for servers that verify clients; server_name: the name
  // the server certificate must carry when it differs from the URL's host.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  // Replies come back on "<inbox_prefix>.<id>" (default "_INBOX"): a tenant's user may subscribe
  // only under its own prefix, so its requests must use it.
  std::string inbox_prefix;
};

// Connects; the returned bus owns the connection. Errors are kUnavailable with the URL named.
Result<std::unique_ptr<Bus>> connect_nats(const NatsOptions& options);

// Secrets from the environment (a Kubernetes Secret as env) instead of files: GPUAAS_NATS_PASSWORD
// for the configured user when it has no password yet, GPUAAS_NATS_TOKEN when no other identity
// is configured. Set options win; empty variables count as unset.
void nats_secrets_from_env(NatsOptions& o);

}  // namespace gpuaas::bus
