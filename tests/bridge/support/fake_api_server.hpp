// An in-process fake Kubernetes API server for the bridge's tests (civetweb, 127.0.0.1, a free
// port). It speaks the real API's wire format for what the bridge uses: list (paged), watch
// (chunked JSON lines, bookmarks, timeouts, 410 Gone and ERROR events), get, create, merge and
// JSON patch, delete and the /scale subresource, with Status bodies for errors. It also serves
// discovery (/api, /apis, their group versions, /version; fake_api_discovery.hpp) for the
// registered resources, so that a stock kubectl works against it (kubectl_test.cpp). Tests change
// the store directly and inject failures.
// Like the real server: list items of built-in types (no dot in the group) come without kind and
// apiVersion; a watch from resourceVersion "" or "0" starts with the current objects as ADDED;
// a no-op patch changes no resourceVersion; a spec change bumps metadata.generation; pages of a
// list share the first page's resourceVersion. Not modelled: field selectors, set-based label
// selectors, server-side apply, admission, finalizers, compaction of continue tokens, Table
// output (kubectl prints its own NAME/AGE columns), OpenAPI (404, so kubectl needs
// --validate=false), strategic merge patch (a plain merge patch on built-in kinds; custom
// resources get 415 as from the real server).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuaas::bridge {

struct FakeStore;

class FakeApiServer {
 public:
  // Plain HTTP. Throws std::runtime_error on failure.
  static std::unique_ptr<FakeApiServer> start();
  // HTTPS with one PEM file holding the certificate and its key (civetweb's ssl_certificate).
  // civetweb 1.15 with OpenSSL 3 needs the shim of docs/bridge-webhook.md: `tls_shim` is its path
  // (dlopened first). With client_ca_file, clients must present a certificate signed by it.
  static std::unique_ptr<FakeApiServer> start_tls(const std::string& pem_file,
                                                  const std::string& tls_shim,
                                                  const std::string& client_ca_file = "");
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT" (https:// when TLS)

  // Register a resource: paths /api/v1/... for apiVersion "v1", /apis/<group>/<version>/... else.
  void add_resource(const std::string& api_version, const std::string& kind,
                    const std::string& plural, bool namespaced, bool has_scale = false);

  // Store manipulation from the test (each bumps the global resourceVersion and records a watch
  // event). put: create or replace; sets uid (kept on replace) and resourceVersion; returns the rv.
  std::string put(const nlohmann::json& object);
  void remove(const std::string& api_version, const std::string& kind, const std::string& ns,
              const std::string& name);
  std::optional<nlohmann::json> get(const std::string& api_version, const std::string& kind,
                                    const std::string& ns, const std::string& name) const;
  std::string resource_version() const;  // the current global resourceVersion

  // Failure injection:
  void require_token(const std::string& token);  // other tokens get 401
  // Watches from older resourceVersions get 410 Gone (HTTP) ...
  void forget_history_before(const std::string& resource_version);
  // ... or an ERROR event with this code on open watches (which then end).
  void send_error_event(int code);
  // A watch from before the history window gets 200 and an ERROR event (code 410) instead of an
  // HTTP 410, as the real API server's watch cache answers.
  void gone_as_error_event(bool on);
  // The next request with this method whose path starts with the prefix gets this status and a
  // Status body (e.g. 409 Conflict, 429, 500). Several queue up in order.
  void fail_next(const std::string& method, const std::string& path_prefix, int status,
                 const std::string& message = "");
  void bookmark();       // a BOOKMARK on every open watch
  void close_watches();  // ends every open watch stream (normal close)

  // What happened (for assertions):
  struct Request {
    std::string method, path, query, content_type, body, authorization;
  };
  std::vector<Request> requests() const;
  void clear_requests();
  // Watches being served. A watch whose client went away (KubeClient::stop) counts until the
  // server next writes to it, its timeoutSeconds (capped at 30 s) ends, or the server stops.
  int open_watches() const;
  // Waits (bounded, polling) until at least n watches are open; false on timeout.
  bool wait_for_watches(int n, int timeout_ms = 5000) const;

  // The store itself, for stand-ins of cluster controllers (stand_in_operator.hpp,
  // stand_in_scheduler.hpp) that act on it as the API server's own requests do.
  FakeStore& store();

  struct Impl;

 private:
  explicit FakeApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::bridge
