// Child processes for end-to-end tests: the real gpuaasd and gpuaasctl binaries.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace gpuaas::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

// Runs a shell command, capturing stdout (stderr goes to the test's stderr).
inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A long-running child (gpuaasd) with its stderr in a log file.
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> args, std::string log) : log_(std::move(log)) {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      FILE* f = std::freopen(log_.c_str(), "w", stderr);
      (void)f;
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      pid_ = -1;
      return false;
    }
    return true;
  }
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Sends the signal and waits (bounded) for the exit code; -1 when killed by a signal.
  int stop(int sig = SIGTERM, std::chrono::seconds bound = std::chrono::seconds(20)) {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, sig);
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!alive()) return exit_code_;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return -2;
  }
  std::string log() const {
    std::ifstream f(log_);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// Retries `pred` every 20 ms until it holds or the bound passes.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds bound = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

inline std::string temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() /
           ("gpuaas-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

}  // namespace gpuaas::testing
