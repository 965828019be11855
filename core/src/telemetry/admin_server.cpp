#include "gpuaas/telemetry/admin_server.hpp"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

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

struct ListenAddress {
  std::string host;  // IPv4 literal
  int port = 0;
};

// Strict on purpose: civetweb's own parser accepts odd forms ("9464", "+9464", "9464r") with
// meanings that would surprise an operator, and reports failures vaguely.
std::optional<ListenAddress> ParseListen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) return std::nullopt;
  ListenAddress out;
  out.host = listen.substr(0, colon);
  if (out.host == "localhost") out.host = "127.0.0.1";  // civetweb wants a literal
  in_addr ignored{};
  if (inet_pton(AF_INET, out.host.c_str(), &ignored) != 1) return std::nullopt;

  const std::string_view port(listen.data() + colon + 1, listen.size() - colon - 1);
  if (port.size() > 5) return std::nullopt;
  for (const char c : port) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (ec != std::errc() || end != port.data() + port.size() || out.port > 65535) {
    return std::nullopt;
  }
  return out;
}

void InitCivetwebOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

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

// Opens and closes a connection to the server's listening socket. civetweb's accept loop polls
// with a 2 s timeout and checks for shutdown only between polls; a connection wakes it at once.
void Poke(const sockaddr_in& target) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  timeval timeout{};
  timeout.tv_usec = 100 * 1000;  // Linux applies the send timeout to connect()
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof(target));
  close(fd);
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
  std::string address;
  sockaddr_in wake_target{};  // where Poke() reaches the listener (0.0.0.0 -> loopback)
  mg_context* ctx = nullptr;

  std::mutex mutex;
  std::map<std::string, HttpHandler, std::less<>> handlers;

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
  const auto parsed = ParseListen(listen);
  if (!parsed) {
    return Status::invalid("admin server: malformed listen address '" + listen +
                           "' (want HOST:PORT, e.g. 127.0.0.1:9464)");
  }
  if (registry == nullptr) return Status::invalid("admin server: registry is null");
  InitCivetwebOnce();

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

  const std::string ports = parsed->host + ":" + std::to_string(parsed->port);
  // Two threads are plenty for scrapes and probes; a bound on request time keeps a stalled client
  // from holding one forever or stalling shutdown.
  // clang-format off
  const char* options[] = {
      "listening_ports", ports.c_str(),
      "num_threads", "2",
      "request_timeout_ms", "10000",
      nullptr,
  };
  // clang-format on
  mg_callbacks callbacks{};
  callbacks.begin_request = &Impl::OnRequest;
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = impl.get();
  init.configuration_options = options;
  char error_text[256] = {};
  unsigned error_code = 0;
  mg_error_data error{};
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);

  impl->ctx = mg_start2(&init, &error);
  if (impl->ctx == nullptr) {
    // The listen string is validated above and the other options are fixed, so a failure here
    // is about the socket (port in use, no permission): something that may work later.
    return Status::unavailable("admin server: cannot listen on " + ports + ": " +
                               (error_text[0] != '\0' ? error_text : "civetweb failed to start"));
  }

  mg_server_port bound{};
  if (mg_get_server_ports(impl->ctx, 1, &bound) != 1) {
    mg_stop(impl->ctx);
    return Status::internal("admin server: cannot read the bound port of " + ports);
  }
  impl->address = parsed->host + ":" + std::to_string(bound.port);
  impl->wake_target.sin_family = AF_INET;
  impl->wake_target.sin_port = htons(static_cast<std::uint16_t>(bound.port));
  inet_pton(AF_INET, parsed->host == "0.0.0.0" ? "127.0.0.1" : parsed->host.c_str(),
            &impl->wake_target.sin_addr);
  return std::unique_ptr<AdminServer>(new AdminServer(std::move(impl)));
}

AdminServer::AdminServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AdminServer::~AdminServer() {
  if (!impl_ || impl_->ctx == nullptr) return;
  // mg_stop joins civetweb's threads, so no callback can touch impl_ afterwards. Left alone it
  // takes up to 2 s (see Poke); poke the listener until it returns so shutdown is near-instant.
  std::atomic<bool> stopped{false};
  std::optional<std::thread> waker;
  try {
    waker.emplace([&stopped, target = impl_->wake_target] {
      while (!stopped.load()) {
        Poke(target);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  } catch (const std::system_error&) {
    // No thread: shut down the slow way.
  }
  mg_stop(impl_->ctx);
  stopped.store(true);
  if (waker) waker->join();
}

void AdminServer::Handle(const std::string& path, HttpHandler handler) {
  std::string key = path.starts_with('/') ? path : "/" + path;
  std::lock_guard lock(impl_->mutex);
  impl_->handlers[std::move(key)] = std::move(handler);
}

std::string AdminServer::address() const { return impl_->address; }

}  // namespace gpuaas::telemetry
