// gpuaas-bench: measurements that print one JSON object on one line, as the last line of output.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bus_bench.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpuaas-bench: gpuaas benchmarks (JSON on the last line of stdout)"};
  app.require_subcommand(1);
  gpuaas::bench::BusBenchOptions bus;
  std::string server;
  auto* b = app.add_subcommand("bus", "Raw nats.c core and JetStream rates vs daemon ingestion");
  b->add_option("--server", server, "Use this NATS server (own streams under gpuaas-bench.)");
  b->add_option("--node-file", bus.node_file,
                "Node manifest for the large messages (default "
                "../shared/manifests/gpu-node/virtual-gpu-node.yaml)");
  b->add_option("--small-messages", bus.small_messages, "Messages per round, small size");
  b->add_option("--large-messages", bus.large_messages, "Messages per round, large size");
  b->add_option("--repeat", bus.repeat, "Rounds; medians are reported")->check(CLI::PositiveNumber);
  b->add_option("--batch", bus.batch, "Fetch batch size")->check(CLI::PositiveNumber);
  b->add_option("--prefetch", bus.prefetch, "Batches the daemon fetches ahead (0: none)")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (b->parsed()) {
    if (!server.empty()) bus.server = server;
    return gpuaas::bench::run_bus_bench(bus);
  }
  return 2;
}
