// gpuaas-bench: measurements that print one JSON object on one line, as the last line of output.
#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>

#include "admission_bench.hpp"
#include "answers_bench.hpp"
#include "bus_bench.hpp"
#include "soak_bench.hpp"

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
  gpuaas::bench::SoakOptions soak;
  std::string soak_server;
  double run_seconds = 30, admit_timeout = 60;
  int drain_seconds = 60;
  auto* k = app.add_subcommand(
      "soak",
      "A fixed event rate for minutes against nats-server and a gpuaasd child: memory, "
      "backlog and admission latency (docs/benchmarks.md, Soak)");
  k->add_option("--server", soak_server, "Use this NATS server (own streams under gpuaas-soak.)");
  k->add_option("--rate", soak.rate,
                "Events per second, all kinds (default 414: ten times the "
                "base rate in docs/benchmarks.md)")
      ->check(CLI::PositiveNumber);
  k->add_option("--minutes", soak.minutes, "Paced publishing time (default 10)")
      ->check(CLI::PositiveNumber);
  k->add_option("--warmup-minutes", soak.warmup_minutes,
                "The verdict's quarters start after this (default 0: the whole run)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--drain-seconds", drain_seconds, "Bound on the catch-up afterwards (default 60)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--job-rate", soak.mix.job_rate, "Job arrivals per second (default 10)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--run-seconds", run_seconds, "How long each Job's pod runs (default 30)")
      ->check(CLI::PositiveNumber);
  k->add_option("--admit-timeout", admit_timeout,
                "Seconds before a Job not admitted is deleted (default 60)")
      ->check(CLI::PositiveNumber);
  k->add_option("--nodes", soak.mix.nodes, "GPU nodes, half H100, half A100 (default 1213)")
      ->check(CLI::Range(2, 100000));
  k->add_option("--seed", soak.mix.seed, "RNG seed (default 1)");
  k->add_option("--gpuaasd", soak.gpuaasd, "gpuaasd binary (default: beside gpuaas-bench)");
  k->add_option("--plugins", soak.plugins, "Plugin directory (default: ../plugins from there)");
  k->add_option("--node-file", soak.node_file,
                "Node manifest (default ../shared/manifests/gpu-node/virtual-gpu-node.yaml)");
  gpuaas::bench::AnswersOptions ans;
  auto* q = app.add_subcommand(
      "answers",
      "gpuaasctl state, explain and report on a large cluster, against nats-server and a gpuaasd "
      "child: counts and median times (docs/benchmarks.md)");
  q->add_option("--nodes", ans.scene.nodes, "H100 nodes of 8 GPUs (default 10000)")
      ->check(CLI::Range(1, 1000000));
  q->add_option("--workloads", ans.scene.workloads, "Suspended 1-GPU Jobs (default 50000)")
      ->check(CLI::Range(1, 10000000));
  q->add_option("--namespaces", ans.scene.namespaces, "Namespaces team-0.. (default 50)")
      ->check(CLI::Range(1, 100000));
  q->add_option("--tenants", ans.scene.tenants, "ClusterQueues the namespaces feed (default 5)")
      ->check(CLI::Range(1, 10000));
  q->add_option("--queued-share", ans.scene.queued_share,
                "Share of each tenant's Jobs above its quota (default 0.1)")
      ->check(CLI::Range(0.0, 1.0));
  q->add_option("--repeats", ans.repeats, "Runs of each command; medians (default 3)")
      ->check(CLI::PositiveNumber);
  int settle_seconds = 600;
  q->add_option("--settle-timeout", settle_seconds,
                "Seconds to apply the scene and decide every Job (default 600)")
      ->check(CLI::PositiveNumber);
  q->add_option("--gpuaasd", ans.gpuaasd, "gpuaasd binary (default: beside gpuaas-bench)");
  q->add_option("--gpuaasctl", ans.gpuaasctl, "gpuaasctl binary (default: beside gpuaas-bench)");
  q->add_option("--plugins", ans.plugins, "Plugin directory (default: ../plugins from there)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (a->parsed()) return gpuaas::bench::run_admission_bench(adm);
  if (q->parsed()) {
    ans.settle = std::chrono::seconds(settle_seconds);
    return gpuaas::bench::run_answers_bench(ans);
  }
  if (k->parsed()) {
    if (!soak_server.empty()) soak.server = soak_server;
    soak.drain = std::chrono::seconds(drain_seconds);
    soak.mix.run_time = std::chrono::milliseconds(std::llround(run_seconds * 1000));
    soak.mix.admit_timeout = std::chrono::milliseconds(std::llround(admit_timeout * 1000));
    return gpuaas::bench::run_soak_bench(soak);
  }
  if (b->parsed()) {
    if (!server.empty()) bus.server = server;
    return gpuaas::bench::run_bus_bench(bus);
  }
  return 2;
}
