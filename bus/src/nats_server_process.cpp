#include "gpuaas/bus/nats_server_process.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

namespace gpuaas::bus {
namespace {

bool port_open(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int NatsServerProcess::free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

Result<std::unique_ptr<NatsServerProcess>> NatsServerProcess::start(NatsServerOptions options) {
  std::unique_ptr<NatsServerProcess> p(new NatsServerProcess(std::move(options)));
  if (p->options_.port == 0) p->options_.port = free_port();
  if (p->options_.store_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpuaas-nats-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return Status::internal("cannot create a temp dir");
    p->options_.store_dir = tmpl;
    p->own_store_ = true;
  }
  if (auto s = p->spawn(); !s) return s;
  return p;
}

Status NatsServerProcess::spawn() {
  std::vector<std::string> args = {
      options_.binary, "-a",  "127.0.0.1",       "-p", std::to_string(options_.port),
      "-js",           "-sd", options_.store_dir};
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::string log = options_.store_dir + "/nats-server.log";
  pid_t pid = ::fork();
  if (pid < 0) return Status::internal("fork failed");
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    FILE* f = std::freopen(log.c_str(), "a", stderr);
    (void)f;
    ::execvp(argv[0], argv.data());
    std::_Exit(127);
  }
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + options_.ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::unavailable(options_.binary + " exited at start (is it installed? see " + log +
                                 ")");
    }
    if (port_open(options_.port)) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  return Status::unavailable(options_.binary + " did not listen on 127.0.0.1:" +
                             std::to_string(options_.port) + " in time");
}

std::string NatsServerProcess::url() const {
  return "nats://127.0.0.1:" + std::to_string(options_.port);
}

void NatsServerProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 1000; ++i) {  // 10 s
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Status NatsServerProcess::restart() {
  stop();
  return spawn();
}

NatsServerProcess::~NatsServerProcess() {
  stop();
  if (own_store_) {
    std::error_code ec;
    std::filesystem::remove_all(options_.store_dir, ec);
  }
}

}  // namespace gpuaas::bus
