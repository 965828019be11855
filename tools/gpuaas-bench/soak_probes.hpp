// What the soak needs around gpuaasd: the daemon as a child process, its RSS and its /metrics.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuaas::bench {

// A child process (gpuaasd) with its stderr in a log file, so that its RSS is its own. It dies
// with this program (PR_SET_PDEATHSIG): the soak never leaves it behind.
class Child {
 public:
  Child(std::vector<std::string> args, const std::string& log);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool alive();
  // Sends `sig` and waits; the exit code, -1 when a signal ended it, -2 when it had to be
  // killed after `bound`.
  int stop(int sig, std::chrono::seconds bound);

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// VmRSS of a process in bytes (/proc/PID/status); -1 when unknown.
int64_t rss_bytes(pid_t pid);

// GET http://127.0.0.1:port/path with a 5 s timeout; the body, or "" on any failure.
std::string http_get(int port, const std::string& path);

// Prometheus text: the sum of each metric name's samples; `lines` counts the samples.
std::map<std::string, double> metric_sums(const std::string& text, int64_t* lines);

}  // namespace gpuaas::bench
