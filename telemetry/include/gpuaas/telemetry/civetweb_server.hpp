// One civetweb server's start and prompt stop, shared by everything that serves HTTP(S) on
// civetweb (admin server, admission webhook, the tests' fake API server).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/base/status.hpp"

// civetweb's own types, so users of this header need not include civetweb.h.
struct mg_context;
struct mg_callbacks;

namespace gpuaas::telemetry {

struct ListenAddress {
  std::string host;  // IPv4 literal ("localhost" is read as 127.0.0.1)
  int port = 0;      // 0: any free port
};

// Strict "HOST:PORT" with HOST an IPv4 literal or "localhost" and PORT 0..65535 in digits only.
// Strict on purpose: civetweb's own parser accepts odd forms ("9464", "+9464", "9464r") with
// meanings that would surprise an operator, and reports failures vaguely.
std::optional<ListenAddress> parse_listen(const std::string& listen);

class CivetwebServer {
 public:
  // civetweb configuration options as name/value pairs, without listening_ports.
  using Options = std::vector<std::pair<std::string, std::string>>;

  // Starts civetweb listening on `listen` (HTTPS when `tls`: then `options` carry the ssl_*
  // settings). Callbacks and `user_data` are handed to civetweb as they are; the user data must
  // outlive the server. `what` prefixes error messages ("admin server").
  // Errors: cannot listen -> unavailable "<what>: cannot listen on HOST:PORT: <civetweb's text>"
  // ("cannot serve HTTPS on HOST:PORTs" with TLS); bound port unknown -> internal.
  static Result<std::unique_ptr<CivetwebServer>> start(const ListenAddress& listen, bool tls,
                                                       const Options& options,
                                                       const mg_callbacks& callbacks,
                                                       void* user_data, const std::string& what);

  // Loads a library with RTLD_GLOBAL once per path (e.g. the TLS shim civetweb 1.15 needs with
  // OpenSSL 3: docs/bridge-webhook.md). It must come before the first TLS start, which makes
  // civetweb dlopen libssl. Returns "" when loaded (or `path` is empty), else dlerror's text.
  static std::string load_tls_shim(const std::string& path);

  // "HOST:PORT" actually bound, e.g. "127.0.0.1:40123" after asking for port 0.
  std::string address() const { return address_; }
  int port() const { return port_; }
  mg_context* context() const { return ctx_; }

  CivetwebServer(const CivetwebServer&) = delete;
  CivetwebServer& operator=(const CivetwebServer&) = delete;
  // Stops civetweb and joins its threads, so no callback runs afterwards. Promptly: civetweb's
  // accept loop checks for shutdown only every 2 s, so a thread pokes the listener meanwhile.
  ~CivetwebServer();

 private:
  CivetwebServer(mg_context* ctx, std::string host, int port);

  mg_context* ctx_;
  std::string host_;  // as listened on; the poke goes to loopback for 0.0.0.0
  int port_;
  std::string address_;
};

}  // namespace gpuaas::telemetry
