// A nats-server child process on 127.0.0.1 with JetStream and its store in a temporary directory.
// For tests, the benchmark and the demo; stops (and removes its store) when destroyed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::bus {

struct NatsServerOptions {
  std::string binary = "nats-server";
  int port = 0;                         // 0: a free port
  std::string store_dir;                // empty: a new temporary directory, removed at the end
  std::vector<std::string> extra_args;  // e.g. {"-c", "cluster.conf"}
  std::chrono::milliseconds ready_timeout{10000};
};

class NatsServerProcess {
 public:
  static Result<std::unique_ptr<NatsServerProcess>> start(NatsServerOptions options);
  ~NatsServerProcess();
  NatsServerProcess(const NatsServerProcess&) = delete;
  NatsServerProcess& operator=(const NatsServerProcess&) = delete;

  std::string url() const;  // nats://127.0.0.1:PORT
  int port() const { return options_.port; }
  const std::string& store_dir() const { return options_.store_dir; }
  // SIGTERM and wait (SIGKILL after 10 s). The store stays until destruction.
  void stop();
  // Starts again on the same port with the same store.
  Status restart();
  bool running() const { return pid_ > 0; }

  // A TCP port on 127.0.0.1 that was free a moment ago.
  static int free_port();

 private:
  explicit NatsServerProcess(NatsServerOptions o) : options_(std::move(o)) {}
  Status spawn();

  NatsServerOptions options_;
  bool own_store_ = false;
  pid_t pid_ = -1;
};

}  // namespace gpuaas::bus
