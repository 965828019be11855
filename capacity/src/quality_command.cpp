#include "gpuaas/capacity/quality_command.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace gpuaas::capacity {

std::string run_quality_command(const std::string& command, const RequestRecord& r,
                                double timeout_seconds) {
  int in[2];
  if (::pipe(in) != 0) return "cannot run the check: no pipe";
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(in[0]);
    ::close(in[1]);
    return "cannot run the check: fork failed";
  }
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::close(in[0]);
    ::close(in[1]);
    ::setenv("GPUAAS_PROMPT_TOKENS", std::to_string(r.prompt_tokens).c_str(), 1);
    ::setenv("GPUAAS_COMPLETION_TOKENS", std::to_string(r.completion_tokens).c_str(), 1);
    ::setenv("GPUAAS_MAX_TOKENS", std::to_string(r.max_tokens).c_str(), 1);
    ::setenv("GPUAAS_FINISH_REASON", r.finish_reason.c_str(), 1);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  ::close(in[0]);
  // The answer goes in whole unless the command stops reading (its exit decides then).
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  const char* p = r.text.data();
  std::size_t left = r.text.size();
  while (left > 0) {
    const ssize_t n = ::write(in[1], p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::close(in[1]);
  ::sigaction(SIGPIPE, &old, nullptr);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) return "cannot run the check: wait failed";
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "the check did not end within its timeout";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "the check command was not found";
  return "the check failed (exit " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")";
}

int apply_quality_command(const std::string& command, std::vector<RequestRecord>& records,
                          double timeout_seconds) {
  int failed = 0;
  for (auto& r : records) {
    if (!r.error.empty() || !r.quality_ok) continue;
    if (!run_quality_command(command, r, timeout_seconds).empty()) {
      r.quality_ok = false;
      ++failed;
    }
    r.text.clear();
    r.text.shrink_to_fit();
  }
  return failed;
}

}  // namespace gpuaas::capacity
