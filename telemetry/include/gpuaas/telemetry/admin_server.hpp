// Small admin HTTP server on civetweb: GET /metrics, GET /healthz and extra GET endpoints.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::telemetry {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Receives the query string without '?' ("" if none). Runs on a server thread; an exception becomes
// a 500 response carrying its message.
using HttpHandler = std::function<HttpResponse(std::string_view query)>;

class AdminServer {
 public:
  // listen: "HOST:PORT" with HOST an IPv4 address or "localhost", e.g. "127.0.0.1:9464" or
  // "0.0.0.0:9464"; port 0 picks a free port. Serves GET /metrics from `registry` (content type
  // "text/plain; version=0.0.4; charset=utf-8") and GET /healthz ("ok").
  // Errors: malformed listen string or null registry -> invalid; cannot bind -> unavailable.
  static gpuaas::Result<std::unique_ptr<AdminServer>> Start(const std::string& listen,
                                                            std::shared_ptr<Registry> registry);

  // Adds or replaces (/metrics and /healthz too) the handler for GET `path`, matched exactly.
  // Thread-safe; may be called while serving.
  void Handle(const std::string& path, HttpHandler handler);

  // "HOST:PORT" actually bound, e.g. "127.0.0.1:40123" after asking for port 0.
  std::string address() const;

  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;
  // Stops the server and waits for in-flight requests.
  ~AdminServer();

 private:
  struct Impl;
  explicit AdminServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::telemetry
