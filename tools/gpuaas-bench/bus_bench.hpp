// gpuaas-bench bus: raw nats.c core and JetStream rates against the daemon's ingestion rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuaas::bench {

struct BusBenchOptions {
  std::optional<std::string> server;  // none: start a nats-server on 127.0.0.1
  std::string node_file;              // a Node manifest for the large messages
  int64_t small_messages = 200000;
  int64_t large_messages = 40000;
  int repeat = 3;
  int batch = 512;
  int prefetch = 2;  // batches the daemon's consumer fetches ahead
};

// Prints progress on stderr and one JSON line on stdout. Returns the exit code.
int run_bus_bench(const BusBenchOptions& o);

}  // namespace gpuaas::bench
