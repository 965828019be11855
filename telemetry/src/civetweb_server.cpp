#include "gpuaas/telemetry/civetweb_server.hpp"

#include <arpa/inet.h>
#include <civetweb.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>

namespace gpuaas::telemetry {
namespace {

// civetweb's first mg_init_library initialises its global lock unguarded, and the TLS shim must be
// loaded before civetweb first dlopens libssl: one lock orders both across all servers.
std::mutex& init_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Opens and closes a connection to the listening socket. civetweb's accept loop polls with a 2 s
// timeout and checks for shutdown only between polls; a connection wakes it at once.
void poke(const sockaddr_in& target) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  timeval timeout{};
  timeout.tv_usec = 100 * 1000;  // Linux applies the send timeout to connect()
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof(target));
  close(fd);
}

}  // namespace

std::optional<ListenAddress> parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) return std::nullopt;
  ListenAddress out;
  out.host = listen.substr(0, colon);
  if (out.host == "localhost") out.host = "127.0.0.1";  // civetweb wants a literal
  in_addr ignored{};
  if (inet_pton(AF_INET, out.host.c_str(), &ignored) != 1) return std::nullopt;

  const std::string_view port(listen.data() + colon + 1, listen.size() - colon - 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (ec != std::errc() || end != port.data() + port.size() || out.port > 65535) {
    return std::nullopt;
  }
  return out;
}

std::string CivetwebServer::load_tls_shim(const std::string& path) {
  static std::string loaded;
  std::lock_guard lock(init_mutex());
  if (path.empty() || path == loaded) return "";
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* e = dlerror();
    return e != nullptr ? e : "dlopen failed";
  }
  loaded = path;
  return "";
}

Result<std::unique_ptr<CivetwebServer>> CivetwebServer::start(const ListenAddress& listen, bool tls,
                                                              const Options& options,
                                                              const mg_callbacks& callbacks,
                                                              void* user_data,
                                                              const std::string& what) {
  {
    // Reference counted by civetweb; TLS (OpenSSL) is initialised the first time it is asked for,
    // when civetweb is the first user; mg_start2 loads it otherwise. Failures show in its text.
    std::lock_guard lock(init_mutex());
    mg_init_library(tls ? MG_FEATURES_TLS : 0);
  }
  const std::string ports =
      listen.host + ":" + std::to_string(listen.port) + (tls ? std::string("s") : std::string());
  std::vector<const char*> flat = {"listening_ports", ports.c_str()};
  for (const auto& [name, value] : options) {
    flat.push_back(name.c_str());
    flat.push_back(value.c_str());
  }
  flat.push_back(nullptr);

  mg_init_data init{};
  init.callbacks = &callbacks;  // copied by mg_start2
  init.user_data = user_data;
  init.configuration_options = flat.data();
  char error_text[256] = {};
  unsigned error_code = 0;
  mg_error_data error{};
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);
  mg_context* ctx = mg_start2(&init, &error);
  if (ctx == nullptr) {
    // Callers validate the listen string and fix the other options, so a failure here is mostly
    // about the socket (port in use, no permission): something that may work later.
    return Status::unavailable(what + ": cannot " + (tls ? "serve HTTPS" : "listen") + " on " +
                               ports + ": " +
                               (error_text[0] != '\0' ? error_text : "civetweb failed to start"));
  }
  mg_server_port bound{};
  if (mg_get_server_ports(ctx, 1, &bound) != 1) {
    mg_stop(ctx);
    return Status::internal(what + ": cannot read the bound port of " + ports);
  }
  return std::unique_ptr<CivetwebServer>(new CivetwebServer(ctx, listen.host, bound.port));
}

CivetwebServer::CivetwebServer(mg_context* ctx, std::string host, int port)
    : ctx_(ctx),
      host_(std::move(host)),
      port_(port),
      address_(host_ + ":" + std::to_string(port)) {}

CivetwebServer::~CivetwebServer() {
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(port_));
  inet_pton(AF_INET, host_ == "0.0.0.0" ? "127.0.0.1" : host_.c_str(), &target.sin_addr);
  std::atomic<bool> stopped{false};
  std::optional<std::thread> waker;
  try {
    waker.emplace([&stopped, target] {
      while (!stopped.load()) {
        poke(target);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  } catch (const std::system_error&) {
    // No thread: mg_stop takes up to 2 s instead.
  }
  mg_stop(ctx_);
  stopped.store(true);
  if (waker) waker->join();
}

}  // namespace gpuaas::telemetry
