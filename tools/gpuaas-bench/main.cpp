// gpuaas-bench: measurements that print one JSON object on one line, as the last line of output.
#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <iostream>
#include <memory>

#include "admission_bench.hpp"
#include "answers_bench.hpp"
#include "bus_bench.hpp"
#include "end_to_end_bench.hpp"
#include "restart_bench.hpp"
#include "scale_bench.hpp"
#include "soak_bench.hpp"
#include "soak_scene.hpp"

namespace {

// A subcommand and what runs it once the command line is parsed.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// Whether a flag was given on `sub`'s command line, for the scenes that flags override.
std::function<bool(const char*)> given(CLI::App* sub) {
  return [sub](const char* flag) {
    const CLI::Option* o = sub->get_option_no_throw(flag);
    return o != nullptr && o->count() > 0;
  };
}

// bus: raw nats.c rates against the daemon's intake.
Command add_bus(CLI::App& app) {
  auto bus = std::make_shared<gpuaas::bench::BusBenchOptions>();
  auto server = std::make_shared<std::string>();
  auto* b = app.add_subcommand("bus", "Raw nats.c core and JetStream rates vs daemon ingestion");
  b->add_option("--server", *server, "Use this NATS server (own streams under gpuaas-bench.)");
  b->add_option("--node-file", bus->node_file,
                "Node manifest for the large messages (default "
                "../shared/manifests/gpu-node/virtual-gpu-node.yaml)");
  b->add_option("--small-messages", bus->small_messages, "Messages per round, small size");
  b->add_option("--large-messages", bus->large_messages, "Messages per round, large size");
  b->add_option("--repeat", bus->repeat, "Rounds; medians are reported")
      ->check(CLI::PositiveNumber);
  b->add_option("--batch", bus->batch, "Fetch batch size")->check(CLI::PositiveNumber);
  b->add_option("--prefetch", bus->prefetch, "Batches the daemon fetches ahead (0: none)")
      ->check(CLI::NonNegativeNumber);
  return {b, [bus, server] {
            if (!server->empty()) bus->server = *server;
            return gpuaas::bench::run_bus_bench(*bus);
          }};
}

// admission: the engine alone, in this process.
Command add_admission(CLI::App& app) {
  auto adm = std::make_shared<gpuaas::bench::AdmissionBenchOptions>();
  auto* a = app.add_subcommand("admission", "Admission engine: decisions per second and latency");
  a->add_option("--workloads", adm->workloads, "Workloads submitted up front (default 5000)");
  a->add_option("--queues", adm->queues, "ClusterQueues, one LocalQueue each (default 100)");
  a->add_option("--cohorts", adm->cohorts, "Cohorts the queues are split among (default 10)");
  a->add_option("--nodes", adm->nodes, "GPU nodes (default 1000)");
  a->add_option("--gpus-per-node", adm->gpus_per_node, "GPUs per node (default 8)");
  a->add_option("--seed", adm->seed, "RNG seed (default 1)");
  a->add_option("--steady", adm->steady, "Steady-state iterations (default min(workloads, 20000))");
  a->add_option("--quota-ratio", adm->quota_ratio, "Nominal GPU quota / cluster GPUs (default 1)");
  a->add_option("--deadline-share", adm->deadline_share, "Share of workloads with a deadline");
  a->add_flag("--preemption", adm->preemption, "withinClusterQueue and reclaimWithinCohort on");
  a->add_flag("--fair-sharing", adm->fair_sharing, "AdmissionPolicy fairSharing on");
  return {a, [adm] { return gpuaas::bench::run_admission_bench(*adm); }};
}

// soak: a fixed rate for minutes against a gpuaasd child.
Command add_soak(CLI::App& app) {
  auto soak = std::make_shared<gpuaas::bench::SoakOptions>();
  auto soak_server = std::make_shared<std::string>();
  auto run_seconds = std::make_shared<double>(30);
  auto admit_timeout = std::make_shared<double>(60);
  auto drain_seconds = std::make_shared<int>(60);
  auto* k = app.add_subcommand(
      "soak",
      "A fixed event rate for minutes against nats-server and a gpuaasd child: memory, "
      "backlog and admission latency (docs/benchmarks.md, Soak)");
  k->add_option("--server", *soak_server, "Use this NATS server (own streams under gpuaas-soak.)");
  k->add_option("--rate", soak->rate,
                "Events per second, all kinds (default 414: ten times the "
                "base rate in docs/benchmarks.md)")
      ->check(CLI::PositiveNumber);
  k->add_option("--minutes", soak->minutes, "Paced publishing time (default 10)")
      ->check(CLI::PositiveNumber);
  k->add_option("--warmup-minutes", soak->warmup_minutes,
                "The verdict's quarters start after this (default 0: the whole run)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--drain-seconds", *drain_seconds, "Bound on the catch-up afterwards (default 60)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--job-rate", soak->mix.job_rate, "Job arrivals per second (default 10)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--run-seconds", *run_seconds, "How long each Job's pod runs (default 30)")
      ->check(CLI::PositiveNumber);
  k->add_option("--admit-timeout", *admit_timeout,
                "Seconds before a Job not admitted is deleted (default 60)")
      ->check(CLI::PositiveNumber);
  k->add_option("--nodes", soak->mix.nodes, "GPU nodes, half H100, half A100 (default 1213)")
      ->check(CLI::Range(2, 100000));
  k->add_option("--seed", soak->mix.seed, "RNG seed (default 1)");
  k->add_option("--gpuaasd", soak->gpuaasd, "gpuaasd binary (default: beside gpuaas-bench)");
  k->add_option("--plugins", soak->plugins, "Plugin directory (default: ../plugins from there)");
  k->add_option("--node-file", soak->node_file,
                "Node manifest (default ../shared/manifests/gpu-node/virtual-gpu-node.yaml)");
  k->add_option("--scene", soak->scene,
                "large: 10000 nodes, 1000 ClusterQueues in 100 cohorts, 50000 pending Jobs, "
                "scrapes every 30 s, 50 Jobs/s (the flags below and above override)")
      ->check(CLI::IsMember({"large"}));
  k->add_option("--cluster-queues", soak->mix.cluster_queues,
                "ClusterQueues with a LocalQueue each (default 0: the two teams)")
      ->check(CLI::Range(0, 100000));
  k->add_option("--cohorts", soak->mix.cohorts, "Cohorts the ClusterQueues are split among")
      ->check(CLI::Range(1, 100000));
  k->add_option("--pending", soak->mix.pending, "Jobs too large to admit, preloaded (default 0)")
      ->check(CLI::Range(0, 10000000));
  k->add_option("--scrape-seconds", soak->mix.scrape_seconds,
                "Scrape each node this often, events as due (default 0: scrapes fill --rate)")
      ->check(CLI::NonNegativeNumber);
  k->add_option("--snapshot-every-events", soak->snapshot_every_events,
                "gpuaasd's snapshots.everyEvents (default: gpuaasd's, 10000; 0: no snapshots)")
      ->check(CLI::NonNegativeNumber);
  return {k, [soak, soak_server, run_seconds, admit_timeout, drain_seconds, k] {
            if (!soak_server->empty()) soak->server = *soak_server;
            soak->drain = std::chrono::seconds(*drain_seconds);
            soak->mix.run_time = std::chrono::milliseconds(std::llround(*run_seconds * 1000));
            soak->mix.admit_timeout =
                std::chrono::milliseconds(std::llround(*admit_timeout * 1000));
            gpuaas::bench::apply_soak_scene(soak->scene, soak->mix, given(k));
            if (soak->mix.scrape_seconds > 0) soak->rate = gpuaas::bench::soak_mix_rate(soak->mix);
            return gpuaas::bench::run_soak_bench(*soak);
          }};
}

// answers: gpuaasctl's answers on a large cluster.
Command add_answers(CLI::App& app) {
  auto ans = std::make_shared<gpuaas::bench::AnswersOptions>();
  auto* q = app.add_subcommand(
      "answers",
      "gpuaasctl state, explain and report on a large cluster, against nats-server and a gpuaasd "
      "child: counts and median times (docs/benchmarks.md)");
  q->add_option("--nodes", ans->scene.nodes, "H100 nodes of 8 GPUs (default 10000)")
      ->check(CLI::Range(1, 1000000));
  q->add_option("--workloads", ans->scene.workloads, "Suspended 1-GPU Jobs (default 50000)")
      ->check(CLI::Range(1, 10000000));
  q->add_option("--namespaces", ans->scene.namespaces, "Namespaces team-0.. (default 50)")
      ->check(CLI::Range(1, 100000));
  q->add_option("--tenants", ans->scene.tenants, "ClusterQueues the namespaces feed (default 5)")
      ->check(CLI::Range(1, 10000));
  q->add_option("--queued-share", ans->scene.queued_share,
                "Share of each tenant's Jobs above its quota (default 0.1)")
      ->check(CLI::Range(0.0, 1.0));
  q->add_option("--repeats", ans->repeats, "Runs of each command; medians (default 3)")
      ->check(CLI::PositiveNumber);
  auto settle_seconds = std::make_shared<int>(600);
  q->add_option("--settle-timeout", *settle_seconds,
                "Seconds to apply the scene and decide every Job (default 600)")
      ->check(CLI::PositiveNumber);
  q->add_option("--gpuaasd", ans->gpuaasd, "gpuaasd binary (default: beside gpuaas-bench)");
  q->add_option("--gpuaasctl", ans->gpuaasctl, "gpuaasctl binary (default: beside gpuaas-bench)");
  q->add_option("--plugins", ans->plugins, "Plugin directory (default: ../plugins from there)");
  return {q, [ans, settle_seconds] {
            ans->settle = std::chrono::seconds(*settle_seconds);
            return gpuaas::bench::run_answers_bench(*ans);
          }};
}

// scale: the NodePool planning pass, in this process.
Command add_scale(CLI::App& app) {
  auto scale = std::make_shared<gpuaas::bench::ScaleBenchOptions>();
  auto* sc = app.add_subcommand(
      "scale",
      "NodePool scale-out pass on a large cluster with a backlog, in one process: median "
      "time per pass (docs/benchmarks.md)");
  sc->add_option("--nodes", scale->nodes, "GPU nodes (default 10000)")
      ->check(CLI::Range(1, 1000000));
  sc->add_option("--pending", scale->pending, "Workloads waiting for nodes (default 50000)")
      ->check(CLI::Range(0, 10000000));
  sc->add_option("--pools", scale->pools, "NodePools, one flavor each (default 4)")
      ->check(CLI::Range(1, 1000));
  sc->add_option("--tenants", scale->tenants, "ClusterQueues in one cohort (default 8)")
      ->check(CLI::Range(1, 10000));
  sc->add_option("--gpus-per-node", scale->gpus_per_node, "GPUs per node (default 8)")
      ->check(CLI::Range(1, 64));
  sc->add_option("--passes,--repeat", scale->passes, "Timed passes of each kind (default 30)")
      ->check(CLI::PositiveNumber);
  sc->add_option("--seed", scale->seed, "RNG seed (default 1)");
  sc->add_option("--fill", scale->fill, "Share of GPUs running work holds (default 0.9)")
      ->check(CLI::Range(0.0, 1.0));
  sc->add_option("--deadline-share", scale->deadline_share,
                 "Share of pending workloads with a deadline (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
  sc->add_option("--max-nodes-factor", scale->max_nodes_factor,
                 "Each pool's maxNodes over its nodes (default 2)")
      ->check(CLI::Range(1.0, 1000.0));
  return {sc, [scale] { return gpuaas::bench::run_scale_bench(*scale); }};
}

// restart: gpuaasd killed and started again behind a snapshot.
Command add_restart(CLI::App& app) {
  auto rst = std::make_shared<gpuaas::bench::RestartOptions>();
  auto restart_server = std::make_shared<std::string>();
  auto* r = app.add_subcommand(
      "restart",
      "gpuaasd killed and started again behind a snapshot of a long history: time until "
      "`gpuaasctl state` answers with the model before, the snapshot's size and write time");
  r->add_option("--server", *restart_server,
                "Use this NATS server (own streams under gpuaas-restart.)");
  r->add_option("--events", rst->events,
                "Events in the stream before the restart (default 1000000)")
      ->check(CLI::Range(uint64_t{2}, uint64_t{100'000'000}));
  r->add_option("--rate", rst->rate,
                "Events per second of event time the history spans (default 414)")
      ->check(CLI::PositiveNumber);
  r->add_option("--every-events", rst->every_events,
                "gpuaasd's snapshots.everyEvents (default 10000)")
      ->check(CLI::PositiveNumber);
  r->add_option("--window", rst->window, "Events published ahead of gpuaasd's acks (default 8000)")
      ->check(CLI::PositiveNumber);
  r->add_option("--nodes", rst->mix.nodes, "GPU nodes, half H100, half A100 (default 1213)")
      ->check(CLI::Range(2, 100000));
  r->add_option("--job-rate", rst->mix.job_rate,
                "Job arrivals per second of event time (default 10)")
      ->check(CLI::NonNegativeNumber);
  auto kill_only = std::make_shared<bool>(false);
  r->add_flag("--kill-only", *kill_only, "Only the SIGKILL restart, not the SIGTERM one too");
  r->add_option("--gpuaasd", rst->gpuaasd, "gpuaasd binary (default: beside gpuaas-bench)");
  r->add_option("--gpuaasctl", rst->gpuaasctl, "gpuaasctl binary (default: beside gpuaas-bench)");
  r->add_option("--plugins", rst->plugins, "Plugin directory (default: ../plugins from there)");
  r->add_option("--node-file", rst->node_file,
                "Node manifest (default ../shared/manifests/gpu-node/virtual-gpu-node.yaml)");
  return {r, [rst, restart_server, kill_only] {
            if (!restart_server->empty()) rst->server = *restart_server;
            rst->clean = !*kill_only;
            return gpuaas::bench::run_restart_bench(*rst);
          }};
}

// end-to-end: admissions through gpuaasd against the engine alone.
Command add_end_to_end(CLI::App& app) {
  auto e2e = std::make_shared<gpuaas::bench::EndToEndOptions>();
  auto e2e_server = std::make_shared<std::string>();
  auto* e = app.add_subcommand(
      "end-to-end",
      "Admissions per second through gpuaasd (Jobs in over JetStream, admit actions out) on the "
      "large scene's backlog, against the admission engine alone at the same sizes");
  e->add_option("--server", *e2e_server, "Use this NATS server (own streams under gpuaas-e2e.)");
  e->add_option("--jobs", e2e->jobs, "Admissible Jobs published after the scene (default 20000)")
      ->check(CLI::Range(1, 10000000));
  e->add_option("--nodes", e2e->mix.nodes, "GPU nodes (default 10000)")
      ->check(CLI::Range(2, 100000));
  e->add_option("--cluster-queues", e2e->mix.cluster_queues, "ClusterQueues (default 1000)")
      ->check(CLI::Range(1, 100000));
  e->add_option("--cohorts", e2e->mix.cohorts, "Cohorts (default 100)")
      ->check(CLI::Range(1, 100000));
  e->add_option("--pending", e2e->mix.pending, "Jobs that never fit, preloaded (default 50000)")
      ->check(CLI::Range(0, 10000000));
  e->add_option("--window", e2e->window, "Events published ahead of gpuaasd's acks (default 4000)")
      ->check(CLI::PositiveNumber);
  e->add_flag("!--no-engine", e2e->engine, "Skip the engine-alone run (no ratio)");
  e->add_option("--engine-workloads", e2e->engine_workloads,
                "Workloads of the engine-alone run (default 50000)")
      ->check(CLI::PositiveNumber);
  e->add_option("--gpuaasd", e2e->gpuaasd, "gpuaasd binary (default: beside gpuaas-bench)");
  e->add_option("--plugins", e2e->plugins, "Plugin directory (default: ../plugins from there)");
  e->add_option("--node-file", e2e->node_file,
                "Node manifest (default ../shared/manifests/gpu-node/virtual-gpu-node.yaml)");
  return {e, [e2e, e2e_server, e] {
            if (!e2e_server->empty()) e2e->server = *e2e_server;
            gpuaas::bench::apply_soak_scene("large", e2e->mix, given(e));
            return gpuaas::bench::run_end_to_end_bench(*e2e);
          }};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuaas-bench: gpuaas benchmarks (JSON on the last line of stdout)"};
  app.require_subcommand(1);
  const Command commands[] = {add_bus(app),       add_admission(app), add_soak(app),
                              add_answers(app),   add_scale(app),     add_restart(app),
                              add_end_to_end(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  return 2;
}
