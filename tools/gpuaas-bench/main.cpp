// gpuaas-bench: measurements that print one JSON object on one line, as the last line of output.
#include <CLI/CLI.hpp>
#include <iostream>

#include "admission_bench.hpp"
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
  gpuaas::bench::AdmissionBenchOptions adm;
  auto* a = app.add_subcommand("admission", "Admission engine: decisions per second and latency");
  a->add_option("--workloads", adm.workloads, "Workloads submitted up front (default 5000)");
  a->add_option("--queues", adm.queues, "ClusterQueues, one LocalQueue each (default 100)");
  a->add_option("--cohorts", adm.cohorts, "Cohorts the queues are split among (default 10)");
  a->add_option("--nodes", adm.nodes, "GPU nodes (default 1000)");
  a->add_option("--gpus-per-node", adm.gpus_per_node, "GPUs per node (default 8)");
  a->add_option("--seed", adm.seed, "RNG seed (default 1)");
  a->add_option("--steady", adm.steady, "Steady-state iterations (default min(workloads, 20000))");
  a->add_option("--quota-ratio", adm.quota_ratio, "Nominal GPU quota / cluster GPUs (default 1)");
  a->add_option("--deadline-share", adm.deadline_share, "Share of workloads with a deadline");
  a->add_flag("--preemption", adm.preemption, "withinClusterQueue and reclaimWithinCohort on");
  a->add_flag("--fair-sharing", adm.fair_sharing, "AdmissionPolicy fairSharing on");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (a->parsed()) return gpuaas::bench::run_admission_bench(adm);
  if (b->parsed()) {
    if (!server.empty()) bus.server = server;
    return gpuaas::bench::run_bus_bench(bus);
  }
  return 2;
}
