// Work done by a forked child on a frozen copy of the state: a snapshot's bytes, an API answer.
// fork() hands the child the parent's memory as it stands, copy-on-write, so the caller holds
// the state still only for the fork (a few ms even at hundreds of MB) while the child, on
// another core, turns that copy into bytes sent through a pipe and the parent goes on changing
// its own. Private to gpuaas_core.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "gpuaas/base/status.hpp"

namespace gpuaas::core {

class ForkedWork {
 public:
  // Runs in the child: must not lock what another thread of the parent may hold (no logging, no
  // bus), since only the forking thread lives on there. What it returns is sent.
  using Produce = std::function<std::string()>;

  // Forks a child that runs `produce` and sends what it returns. Call it with the state held
  // still (the model lock). An error when the pipe or the fork fails: the caller then does the
  // work in place.
  static Result<ForkedWork> start(const Produce& produce);

  ForkedWork(ForkedWork&& other) noexcept;
  ForkedWork& operator=(ForkedWork&& other) noexcept;
  ForkedWork(const ForkedWork&) = delete;
  ForkedWork& operator=(const ForkedWork&) = delete;
  // Kills and reaps a child whose image was not collected.
  ~ForkedWork();

  // Reads what the child sent and reaps it: the bytes, or why they are not whole (the child
  // died, sent less than it announced, or nothing for `stall`; it is then killed).
  Result<std::string> collect(std::chrono::milliseconds stall = std::chrono::seconds(60));

  pid_t pid() const { return pid_; }

 private:
  ForkedWork(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  void abandon();  // kills, reaps and closes what is left

  pid_t pid_ = -1;
  int fd_ = -1;  // the pipe's read end
};

}  // namespace gpuaas::core
