#include "soak_probes.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpuaas::bench {

Child::Child(std::vector<std::string> args, const std::string& log) {
  pid_ = ::fork();
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
}

Child::~Child() { (void)stop(SIGKILL, std::chrono::seconds(5)); }

bool Child::alive() {
  int status = 0;
  if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pid_ = -1;
  }
  return pid_ > 0;
}

int Child::stop(int sig, std::chrono::seconds bound) {
  if (!alive()) return exit_code_;
  ::kill(pid_, sig);
  for (auto end = std::chrono::steady_clock::now() + bound;
       std::chrono::steady_clock::now() < end;) {
    if (!alive()) return exit_code_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -2;
}

int64_t rss_bytes(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;  // kB
  }
  return -1;
}

std::string http_get(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size())) {
      char buf[65536];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  auto body = out.find("\r\n\r\n");
  return body == std::string::npos ? "" : out.substr(body + 4);
}

std::map<std::string, double> metric_sums(const std::string& text, int64_t* lines) {
  std::map<std::string, double> sums;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++*lines;
    auto name_end = line.find_first_of("{ ");
    auto value_at = line.rfind(' ');
    if (name_end == std::string::npos || value_at == std::string::npos) continue;
    sums[line.substr(0, name_end)] += std::atof(line.c_str() + value_at + 1);
  }
  return sums;
}

}  // namespace gpuaas::bench
