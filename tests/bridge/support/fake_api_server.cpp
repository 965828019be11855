// The fake API server: civetweb threads serve requests against an in-memory store guarded by one
// mutex; every change is appended to a history that watches replay and wait on (a condition
// variable), as the real API server's watch cache does.
#include "fake_api_server.hpp"

#include <civetweb.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "fake_api_discovery.hpp"
#include "fake_api_store.hpp"
#include "gpuaas/telemetry/civetweb_server.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

std::string Header(mg_connection* conn, const char* name) {
  const char* v = mg_get_header(conn, name);
  return v != nullptr ? v : "";
}

void SendFixed(mg_connection* conn, int status, const std::string& body) {
  const char* reason = mg_get_response_code_text(conn, status);
  std::string head =
      "HTTP/1.1 " + std::to_string(status) + " " + (reason != nullptr ? reason : "") +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n";
  mg_write(conn, head.data(), head.size());
  if (!body.empty()) mg_write(conn, body.data(), body.size());
}

bool SendChunk(mg_connection* conn, const std::string& data) {
  if (data.empty()) return true;
  return mg_send_chunk(conn, data.data(), static_cast<unsigned>(data.size())) > 0;
}

// A patch that cannot be applied (422) gets its message as a cause too, as the real API server
// words it: older kubectl (1.20) prints only the causes of an Invalid Status.
void AddPatchCause(const std::string& method, Reply& reply) {
  if (method != "PATCH" || reply.status != 422 || !reply.body.is_object() ||
      reply.body.contains("details")) {
    return;
  }
  reply.body["details"] = {{"causes",
                            {{{"reason", "UnexpectedServerResponse"},
                              {"field", "patch"},
                              {"message", reply.body.value("message", "")}}}}};
}

}  // namespace

struct FakeApiServer::Impl {
  FakeStore store;  // guarded by store.mutex
  bool tls = false;
  // Last: stopped first, while the store its callbacks use is still there.
  std::unique_ptr<telemetry::CivetwebServer> server;

  // One watch request from open to end, on a civetweb thread.
  void Watch(mg_connection* conn, const Route& route, const Query& query) {
    std::unique_lock lock(store.mutex);
    const std::string rv_text = query.get("resourceVersion");
    const bool bookmarks = query.flag("allowWatchBookmarks");
    int timeout = 30;
    if (!query.get("timeoutSeconds").empty()) timeout = std::stoi(query.get("timeoutSeconds"));
    timeout = std::clamp(timeout, 0, 30);  // capped: tests must not hang on a watch
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);

    std::uint64_t from = 0;
    std::vector<std::string> initial;  // lines before live changes
    if (rv_text.empty() || rv_text == "0") {
      // "Any" resourceVersion: the current state as ADDED events, then changes.
      for (const auto& object : store.list(route.resource, route.ns, "")) {
        initial.push_back(json{{"type", "ADDED"}, {"object", object}}.dump() + "\n");
      }
      from = store.rv;
    } else {
      from = std::stoull(rv_text);
      if (from < store.forgotten_before) {
        const std::string message = "too old resource version: " + rv_text + " (" +
                                    std::to_string(store.forgotten_before) + ")";
        if (!store.gone_as_error_event) {
          lock.unlock();
          SendFixed(conn, 410, StatusBody(410, "Expired", message).dump());
          return;
        }
        initial.push_back(
            json{{"type", "ERROR"}, {"object", StatusBody(410, "Expired", message)}}.dump() + "\n");
        lock.unlock();
        mg_printf(conn,
                  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
                  "chunked\r\nConnection: close\r\n\r\n");
        SendChunk(conn, initial.front());
        mg_send_chunk(conn, "", 0);
        return;
      }
    }

    ++store.open_watches;
    const std::uint64_t my_bookmark = store.bookmark_seq;
    const std::uint64_t my_close = store.close_seq;
    const std::uint64_t my_error = store.error_seq;
    std::uint64_t seen_bookmark = my_bookmark;
    std::size_t next = store.first_after(from);
    lock.unlock();
    mg_printf(conn,
              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
              "chunked\r\nConnection: close\r\n\r\n");
    bool alive = true;
    for (const auto& line : initial) alive = alive && SendChunk(conn, line);
    lock.lock();
    while (alive && !store.shutting_down) {
      std::string out;
      if (store.error_seq != my_error) {
        out = json{{"type", "ERROR"},
                   {"object", StatusBody(store.error_code, StatusReason(store.error_code),
                                         store.error_code == 410 ? "too old resource version"
                                                                 : "injected watch error")}}
                  .dump() +
              "\n";
        lock.unlock();
        SendChunk(conn, out);
        lock.lock();
        break;
      }
      for (; next < store.history.size(); ++next) {
        const auto& change = store.history[next];
        if (change.resource != route.resource) continue;
        if (!route.ns.empty() && change.object["metadata"].value("namespace", "") != route.ns) {
          continue;
        }
        out += json{{"type", change.type}, {"object", change.object}}.dump() + "\n";
      }
      if (store.bookmark_seq != seen_bookmark) {
        seen_bookmark = store.bookmark_seq;
        if (bookmarks) {
          const auto& r = store.resources[route.resource];
          out += json{{"type", "BOOKMARK"},
                      {"object",
                       {{"kind", r.kind},
                        {"apiVersion", r.api_version},
                        {"metadata", {{"resourceVersion", std::to_string(store.rv)}}}}}}
                     .dump() +
                 "\n";
        }
      }
      const bool closing = store.close_seq != my_close;
      if (!out.empty()) {
        lock.unlock();
        alive = SendChunk(conn, out);
        lock.lock();
        continue;  // look again before sleeping: more may have come meanwhile
      }
      if (closing || std::chrono::steady_clock::now() >= deadline) break;
      store.changed.wait_until(lock, deadline);
    }
    --store.open_watches;
    lock.unlock();
    mg_send_chunk(conn, "", 0);
  }

  static int OnRequest(mg_connection* conn) {
    const mg_request_info* info = mg_get_request_info(conn);
    auto* self = static_cast<Impl*>(info->user_data);
    try {
      FakeApiServer::Request req;
      req.method = info->request_method != nullptr ? info->request_method : "";
      req.path = info->local_uri != nullptr ? info->local_uri : "";
      req.query = info->query_string != nullptr ? info->query_string : "";
      req.content_type = Header(conn, "Content-Type");
      req.authorization = Header(conn, "Authorization");
      char buffer[8192];
      for (int n = 0; (n = mg_read(conn, buffer, sizeof(buffer))) > 0;) req.body.append(buffer, n);

      const Query query(req.query);
      std::optional<Route> watch_route;
      Reply reply;
      {
        std::lock_guard lock(self->store.mutex);
        self->store.requests.push_back(req);
        const std::string address = "127.0.0.1:" + std::to_string(self->server->port());
        if (auto discovery = DiscoveryReply(self->store, req, address)) {
          reply = std::move(*discovery);
        } else {
          reply = self->store.handle(req, query, watch_route);
        }
      }
      self->store.changed.notify_all();  // a create, patch or delete wakes the watches
      if (watch_route) {
        self->Watch(conn, *watch_route, query);
        return 200;
      }
      AddPatchCause(req.method, reply);
      SendFixed(conn, reply.status, reply.body.dump());
      return reply.status;
    } catch (const std::exception& e) {
      SendFixed(conn, 500, StatusBody(500, "InternalError", e.what()).dump());
      return 500;
    }
  }
};

FakeApiServer::FakeApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FakeApiServer::~FakeApiServer() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->store.mutex);
    impl_->store.shutting_down = true;  // ends the open watches, which civetweb's stop waits for
  }
  impl_->store.changed.notify_all();
  impl_->server.reset();
}

namespace {

std::unique_ptr<FakeApiServer::Impl> StartImpl(const std::string& pem_file,
                                               const std::string& tls_shim,
                                               const std::string& client_ca_file) {
  // Before the start below: civetweb dlopens "libssl.so" when it first initialises TLS.
  const std::string shim_error = telemetry::CivetwebServer::load_tls_shim(tls_shim);
  if (!shim_error.empty()) {
    throw std::runtime_error("FakeApiServer: cannot load the TLS shim " + tls_shim + ": " +
                             shim_error);
  }
  auto impl = std::make_unique<FakeApiServer::Impl>();
  impl->tls = !pem_file.empty();
  telemetry::CivetwebServer::Options options = {{"num_threads", "24"},
                                                {"request_timeout_ms", "60000"}};
  if (impl->tls) options.emplace_back("ssl_certificate", pem_file);
  if (!client_ca_file.empty()) {
    options.emplace_back("ssl_verify_peer", "yes");
    options.emplace_back("ssl_ca_file", client_ca_file);
  }
  mg_callbacks callbacks{};
  callbacks.begin_request = &FakeApiServer::Impl::OnRequest;
  auto server = telemetry::CivetwebServer::start({"127.0.0.1", 0}, impl->tls, options, callbacks,
                                                 impl.get(), "FakeApiServer");
  if (!server) throw std::runtime_error(server.status().message());
  impl->server = std::move(*server);
  return impl;
}

}  // namespace

std::unique_ptr<FakeApiServer> FakeApiServer::start() {
  return std::unique_ptr<FakeApiServer>(new FakeApiServer(StartImpl("", "", "")));
}

std::unique_ptr<FakeApiServer> FakeApiServer::start_tls(const std::string& pem_file,
                                                        const std::string& tls_shim,
                                                        const std::string& client_ca_file) {
  return std::unique_ptr<FakeApiServer>(
      new FakeApiServer(StartImpl(pem_file, tls_shim, client_ca_file)));
}

FakeStore& FakeApiServer::store() { return impl_->store; }

std::string FakeApiServer::url() const {
  return std::string(impl_->tls ? "https" : "http") +
         "://127.0.0.1:" + std::to_string(impl_->server->port());
}

void FakeApiServer::add_resource(const std::string& api_version, const std::string& kind,
                                 const std::string& plural, bool namespaced, bool has_scale) {
  std::lock_guard lock(impl_->store.mutex);
  impl_->store.resources.push_back({api_version, kind, plural, namespaced, has_scale});
}

std::string FakeApiServer::put(const nlohmann::json& object) {
  std::string rv;
  {
    std::lock_guard lock(impl_->store.mutex);
    rv = impl_->store.put(object);
  }
  impl_->store.changed.notify_all();
  return rv;
}

void FakeApiServer::remove(const std::string& api_version, const std::string& kind,
                           const std::string& ns, const std::string& name) {
  {
    std::lock_guard lock(impl_->store.mutex);
    impl_->store.remove(api_version, kind, ns, name);
  }
  impl_->store.changed.notify_all();
}

std::optional<nlohmann::json> FakeApiServer::get(const std::string& api_version,
                                                 const std::string& kind, const std::string& ns,
                                                 const std::string& name) const {
  std::lock_guard lock(impl_->store.mutex);
  const int r = impl_->store.find_kind(api_version, kind);
  if (r < 0) return std::nullopt;
  const auto it = impl_->store.objects.find(FakeStore::Key(r, ns, name));
  if (it == impl_->store.objects.end()) return std::nullopt;
  return it->second;
}

std::string FakeApiServer::resource_version() const {
  std::lock_guard lock(impl_->store.mutex);
  return std::to_string(impl_->store.rv);
}

void FakeApiServer::require_token(const std::string& token) {
  std::lock_guard lock(impl_->store.mutex);
  impl_->store.required_token = token;
}

void FakeApiServer::forget_history_before(const std::string& resource_version) {
  std::lock_guard lock(impl_->store.mutex);
  impl_->store.forgotten_before = std::stoull(resource_version);
}

void FakeApiServer::gone_as_error_event(bool on) {
  std::lock_guard lock(impl_->store.mutex);
  impl_->store.gone_as_error_event = on;
}

void FakeApiServer::send_error_event(int code) {
  {
    std::lock_guard lock(impl_->store.mutex);
    impl_->store.error_code = code;
    ++impl_->store.error_seq;
  }
  impl_->store.changed.notify_all();
}

void FakeApiServer::fail_next(const std::string& method, const std::string& path_prefix, int status,
                              const std::string& message) {
  std::lock_guard lock(impl_->store.mutex);
  impl_->store.failures.push_back({method, path_prefix, status, message});
}

void FakeApiServer::bookmark() {
  {
    std::lock_guard lock(impl_->store.mutex);
    ++impl_->store.bookmark_seq;
  }
  impl_->store.changed.notify_all();
}

void FakeApiServer::close_watches() {
  {
    std::lock_guard lock(impl_->store.mutex);
    ++impl_->store.close_seq;
  }
  impl_->store.changed.notify_all();
}

std::vector<FakeApiServer::Request> FakeApiServer::requests() const {
  std::lock_guard lock(impl_->store.mutex);
  return impl_->store.requests;
}

void FakeApiServer::clear_requests() {
  std::lock_guard lock(impl_->store.mutex);
  impl_->store.requests.clear();
}

int FakeApiServer::open_watches() const {
  std::lock_guard lock(impl_->store.mutex);
  return impl_->store.open_watches;
}

bool FakeApiServer::wait_for_watches(int n, int timeout_ms) const {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    if (open_watches() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return open_watches() >= n;
}

}  // namespace gpuaas::bridge
