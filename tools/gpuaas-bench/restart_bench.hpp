// gpuaas-bench restart: how long gpuaasd takes to serve `gpuaasctl state` again after a crash
// (SIGKILL) and after a clean stop, behind a snapshot of a long history (1,000,000 events of the
// soak's mix by default), against a nats-server it starts and gpuaasd child processes; and the
// snapshot's size and write time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "soak_traffic.hpp"

namespace gpuaas::bench {

struct RestartOptions {
  std::optional<std::string> server;  // none: start a nats-server on 127.0.0.1
  uint64_t events = 1'000'000;        // in the stream before the restart, the scene included
  // Events per second of event time: sets how much history (event time) the events span.
  double rate = kSoakDefaultRate;
  uint64_t every_events = 10000;  // gpuaasd's snapshots.everyEvents
  // At most this many events published ahead of gpuaasd's acks, so that its admissions come
  // back before the Jobs give up (a Job waits admit_timeout of event time).
  uint64_t window = 8000;
  std::chrono::seconds apply_timeout{3600};  // bound on publishing and applying the history
  std::chrono::seconds ready_timeout{300};   // bound on each restart
  std::chrono::milliseconds poll{100};       // between two `gpuaasctl state` while restarting
  bool clean = true;                         // also time a SIGTERM restart
  std::string gpuaasd;                       // default: beside this program
  std::string gpuaasctl;                     // default: beside this program
  std::string plugins;                       // default: ../plugins from there
  std::string node_file;  // a Node manifest (default ../shared/manifests/gpu-node/...)
  std::string root = "gpuaas-restart";
  SoakMix mix;
};

// Prints progress on stderr and, as the last line of stdout, one JSON object. 0 when every
// restarted gpuaasd answered with the model it had before, 1 when not, 3 when something could
// not be started or the history was not applied in time.
int run_restart_bench(const RestartOptions& o);

}  // namespace gpuaas::bench
