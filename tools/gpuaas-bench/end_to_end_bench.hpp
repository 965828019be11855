// gpuaas-bench end-to-end: admissions per second through gpuaasd, events in over JetStream and
// admit actions out, on the large scene's backlog (10,000 nodes, 1,000 ClusterQueues in 100
// cohorts, 50,000 Jobs that never fit), against the admission engine alone at the same sizes.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "soak_traffic.hpp"

namespace gpuaas::bench {

struct EndToEndOptions {
  std::optional<std::string> server;  // none: start a nats-server on 127.0.0.1
  int jobs = 20000;                   // admissible Jobs published after the scene, unpaced
  // At most this many events published ahead of gpuaasd's acks: the stream's backlog, not the
  // client's, is what the daemon drains.
  uint64_t window = 4000;
  std::chrono::seconds timeout{900};  // bound on the preload, and on publishing and admitting
  bool engine = true;  // also run `gpuaas-bench admission` at the same sizes, for the ratio
  int engine_workloads = 50000;
  std::string gpuaasd;    // default: beside this program
  std::string plugins;    // default: ../plugins from there
  std::string node_file;  // a Node manifest (default ../shared/manifests/gpu-node/...)
  std::string root = "gpuaas-e2e";
  SoakMix mix;  // the large scene unless flags say otherwise
};

// Prints progress on stderr and, as the last line of stdout, one JSON object. 0 when every Job
// was admitted, 1 when not, 3 when something could not be started.
int run_end_to_end_bench(const EndToEndOptions& o);

}  // namespace gpuaas::bench
