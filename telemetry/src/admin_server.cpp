#include "gpuaas/telemetry/admin_server.hpp"

#include <civetweb.h>

#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "gpuaas/telemetry/civetweb_server.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"

namespace gpuaas::telemetry {
namespace {

// A JSON string: metric names and help are ASCII in practice; anything below 0x20 is escaped.
void AppendJsonString(std::string& out, std::string_view v) {
  out += '"';
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

std::string FamiliesJson(const std::vector<MetricFamily>& families) {
  std::string out = "[";
  for (const auto& f : families) {
    if (out.size() > 1) out += ',';
    out += "{\"name\":";
    AppendJsonString(out, f.name);
    out += ",\"type\":";
    AppendJsonString(out, ToString(f.type));
    out += ",\"help\":";
    AppendJsonString(out, f.help);
    out += '}';
  }
  return out + "]";
}

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Header values come from handlers; strip CR/LF so a handler cannot inject headers.
std::string HeaderSafe(std::string value) {
  std::erase_if(value, [](char c) { return c == '\r' || c == '\n'; });
  return value;
}

void Send(mg_connection* conn, const HttpResponse& response, bool with_body) {
  const char* reason = mg_get_response_code_text(conn, response.status);
  std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " +
                     (reason != nullptr ? reason : "") + "\r\n";
  head += "Content-Type: " + HeaderSafe(response.content_type) + "\r\n";
  head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  head += "Cache-Control: no-store\r\n";
  // civetweb runs with keep-alive off; say so, so clients do not wait for more.
  head += "Connection: close\r\n\r\n";
  mg_write(conn, head.data(), head.size());
  if (with_body && !response.body.empty()) {
    mg_write(conn, response.body.data(), response.body.size());
  }
}

HttpResponse TextResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

}  // namespace

struct AdminServer::Impl {
  std::shared_ptr<Registry> registry;
  std::mutex mutex;
  std::map<std::string, HttpHandler, std::less<>> handlers;
  // Last: stopped first, while everything its callbacks use is still there.
  std::unique_ptr<CivetwebServer> server;

  std::optional<HttpHandler> Find(std::string_view path) {
    std::lock_guard lock(mutex);
    const auto it = handlers.find(path);
    if (it == handlers.end()) return std::nullopt;
    return it->second;  // a copy: Handle() may replace the entry while this one runs
  }

  HttpResponse Dispatch(const mg_request_info& info) {
    const std::string_view method = info.request_method != nullptr ? info.request_method : "";
    if (method != "GET" && method != "HEAD") return TextResponse(405, "method not allowed\n");
    const std::string_view path = info.local_uri != nullptr ? info.local_uri : "";
    auto handler = Find(path);
    if (!handler || !*handler) return TextResponse(404, "not found\n");
    const std::string_view query = info.query_string != nullptr ? info.query_string : "";
    // Handlers are other people's code running on our threads: never let an exception reach C.
    try {
      HttpResponse response = (*handler)(query);
      if (response.status < 100 || response.status > 599) {
        return TextResponse(
            500, "handler returned invalid status " + std::to_string(response.status) + "\n");
      }
      return response;
    } catch (const std::exception& e) {
      return TextResponse(500, std::string("handler failed: ") + e.what() + "\n");
    } catch (...) {
      return TextResponse(500, "handler failed: unknown exception\n");
    }
  }

  // civetweb callback for every request; returning the status tells civetweb it was handled.
  static int OnRequest(mg_connection* conn) {
    const mg_request_info* info = mg_get_request_info(conn);
    auto* self = static_cast<Impl*>(info->user_data);
    try {
      const HttpResponse response = self->Dispatch(*info);
      const bool with_body =
          info->request_method == nullptr || std::string_view(info->request_method) != "HEAD";
      Send(conn, response, with_body);
      return response.status;
    } catch (...) {
      // Only allocation failures can get here; answer without allocating more.
      static constexpr char kFailure[] =
          "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      mg_write(conn, kFailure, sizeof(kFailure) - 1);
      return 500;
    }
  }
};

Result<std::unique_ptr<AdminServer>> AdminServer::Start(const std::string& listen,
                                                        std::shared_ptr<Registry> registry) {
  const auto parsed = parse_listen(listen);
  if (!parsed) {
    return Status::invalid("admin server: malformed listen address '" + listen +
                           "' (want HOST:PORT, e.g. 127.0.0.1:9464)");
  }
  if (registry == nullptr) return Status::invalid("admin server: registry is null");

  auto impl = std::make_unique<Impl>();
  impl->registry = std::move(registry);
  // Capture the registry, not the Impl: the handler may be copied out and outlive a lookup.
  impl->handlers.emplace("/metrics", [reg = impl->registry](std::string_view) {
    HttpResponse response;
    response.content_type = kMetricsContentType;
    response.body = TextSerializer().Serialize(reg->Collect());
    return response;
  });
  // Every registered family, with or without series yet: what dashboards and rules may name.
  impl->handlers.emplace("/metrics/families", [reg = impl->registry](std::string_view) {
    HttpResponse response;
    response.content_type = "application/json";
    response.body = FamiliesJson(reg->Collect());
    return response;
  });
  impl->handlers.emplace("/healthz", [](std::string_view) { return TextResponse(200, "ok"); });

  mg_callbacks callbacks{};
  callbacks.begin_request = &Impl::OnRequest;
  // Two threads are plenty for scrapes and probes; a bound on request time keeps a stalled client
  // from holding one forever or stalling shutdown.
  auto server =
      CivetwebServer::start(*parsed, false, {{"num_threads", "2"}, {"request_timeout_ms", "10000"}},
                            callbacks, impl.get(), "admin server");
  if (!server) return server.status();
  impl->server = std::move(*server);
  return std::unique_ptr<AdminServer>(new AdminServer(std::move(impl)));
}

AdminServer::AdminServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AdminServer::~AdminServer() {
  // Joins civetweb's threads, so no callback can touch impl_ afterwards.
  if (impl_) impl_->server.reset();
}

void AdminServer::Handle(const std::string& path, HttpHandler handler) {
  std::string key = path.starts_with('/') ? path : "/" + path;
  std::lock_guard lock(impl_->mutex);
  impl_->handlers[std::move(key)] = std::move(handler);
}

std::string AdminServer::address() const { return impl_->server->address(); }

}  // namespace gpuaas::telemetry
