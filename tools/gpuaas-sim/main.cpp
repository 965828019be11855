// gpuaas-sim: flags to the simulator library (sim/). docs/simulator.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "gpuaas/sim/alibaba_trace.hpp"
#include "gpuaas/sim/chart.hpp"
#include "gpuaas/sim/placement_experiment.hpp"
#include "gpuaas/sim/replay.hpp"
#include "gpuaas/sim/report.hpp"
#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "gpuaas/telemetry/logging.hpp"

namespace {

using namespace gpuaas::sim;

// Beside the binary: build/bin -> build/plugins; installed bin -> lib/gpuaas/plugins.
std::string default_plugins_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const char* rel : {"../plugins", "../lib/gpuaas/plugins"}) {
    const auto dir = exe.parent_path() / rel;
    if (std::filesystem::is_directory(dir, ec)) return dir.lexically_normal().string();
  }
  return "";
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) {
    std::cerr << "gpuaas-sim: cannot write " << path << "\n";
    return false;
  }
  return true;
}

// A progress bar on the terminal only: logs and pipes get none.
std::function<void(double)> progress_bar(const std::string& label) {
  if (isatty(STDOUT_FILENO) == 0) return {};
  return [label](double f) {
    const int width = 30, done = static_cast<int>(f * width + 0.5);
    std::printf("\r%-12s [%s%s] %3d%%", label.c_str(), std::string(done, '#').c_str(),
                std::string(width - done, ' ').c_str(), static_cast<int>(f * 100 + 0.5));
    if (f >= 1.0) std::printf("\r%s\r", std::string(60, ' ').c_str());
    std::fflush(stdout);
  };
}

int run_placement(const std::string& pods_file, const std::string& nodes_file, double load,
                  uint64_t first, uint64_t last, int candidates, const std::string& report) {
  auto pods = read_alibaba_pods(pods_file);
  if (!pods) return std::cerr << "gpuaas-sim: " << pods.status().message() << "\n", 1;
  auto nodes = read_alibaba_nodes(nodes_file);
  if (!nodes) return std::cerr << "gpuaas-sim: " << nodes.status().message() << "\n", 1;
  PlacementOptions o;
  o.load = load;
  if (candidates > 0) o.candidates = candidates;
  auto r = run_placement_seeds(*pods, *nodes, o, first, last);
  if (!r) return std::cerr << "gpuaas-sim: " << r.status().message() << "\n", 1;
  std::cout << placement_report_table(*r);
  if (!report.empty() && !write_file(report, placement_report_json(*r))) return 1;
  return 0;
}

// Runs the scenario once per policy and reports them side by side.
int run_scenario(const Scenario& scenario, const std::vector<Baseline>& policies,
                 SimOptions options, const std::string& report, const std::string& chart,
                 const std::string& decisions, bool compare) {
  options.record_decisions = !decisions.empty();
  std::vector<RunResult> runs;
  for (Baseline b : policies) {
    options.policy = b;
    options.progress = progress_bar(name_of(b));
    auto r = run_simulation(scenario, options);
    if (!r)
      return std::cerr << "gpuaas-sim: " << name_of(b) << ": " << r.status().message() << "\n", 1;
    runs.push_back(std::move(r).value());
  }
  std::cout << "scenario " << scenario.name << ", seed " << options.seed << ", "
            << std::chrono::duration<double>(scenario.duration).count() / 3600 << " h simulated\n\n"
            << report_table(runs);
  if (!report.empty() &&
      !write_file(report, compare ? compare_json(runs) : report_json(runs.front())))
    return 1;
  if (!chart.empty() && !write_file(chart, chart_svg(runs))) return 1;
  if (!decisions.empty() && !write_file(decisions, decisions_jsonl(runs))) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpuaas-sim: replays a scenario or a real trace through gpuaasd's decision code in virtual "
      "time and reports where the GPUs went, side by side with simpler policies.\n\n"
      "  gpuaas-sim --scenario FILE [--seed N] [--report FILE.json] [--compare NAMES] "
      "[--chart FILE.svg]\n"
      "  gpuaas-sim --alibaba PODS.csv NODES.csv [--hours H] [--compare NAMES] ...\n"
      "      the Alibaba GPU trace 2023 (openb): each pod a one-pod Job, submitted at its "
      "creation_time, running (deletion_time - scheduled_time); tenants from the qos column "
      "(LS latency-sensitive, BE best-effort, Burstable burstable, Guaranteed guaranteed); "
      "nodes as in the node list, one pool per GPU model and shape\n"
      "  gpuaas-sim --azure-llm FILE [--services N] [--seed S] [--compare NAMES] ...\n"
      "      the Azure LLM inference trace 2023: each request goes to one of N InferenceServices "
      "(replicas of one GPU, scaled by KServe's autoscaler) drawn with weight 1/(i+1) for "
      "service i, from the seed; compare with "
      "always-on,knative,gpuaas\n"
      "  gpuaas-sim --placement --pods PODS.csv --nodes NODES.csv --load 1.3 [--seed N | --seeds "
      "A-B]\n"
      "      the FGD paper's placement experiment: pods drawn at random (with replacement) and "
      "placed by gpuaas, no departures, until the GPUs asked reach LOAD x capacity\n\n"
      "Policies (--compare): static-fifo, kueue-like, gpuaas, always-on, knative "
      "(docs/simulator.md)."};
  app.set_help_flag("-h,--help", "Show this help");
  std::string scenario_file, report, chart, decisions, compare, server, plugins, azure, seeds;
  std::vector<std::string> alibaba, policy_files;
  std::string pods_file, nodes_file;
  uint64_t seed = 1;
  double load = 1.3, hours = 0;
  int candidates = 0, services = 4;
  bool placement = false;
  app.add_option("--scenario", scenario_file, "Scenario YAML (docs/simulator.md)");
  app.add_option("--alibaba", alibaba, "Alibaba trace replay: PODS.csv NODES.csv")->expected(2);
  app.add_option("--azure-llm", azure, "Azure LLM inference trace replay: the CSV");
  app.add_flag("--placement", placement, "The FGD placement experiment (--pods, --nodes, --load)");
  app.add_option("--pods", pods_file, "Placement experiment: the Alibaba pod list");
  app.add_option("--nodes", nodes_file, "Placement experiment: the Alibaba node list");
  app.add_option("--load", load, "Placement experiment: GPUs asked / capacity (default 1.3)");
  app.add_option("--candidates", candidates, "Placement experiment: nodes scored per pod");
  app.add_option("--seed", seed, "Random seed (default 1; 42 for --placement)");
  app.add_option("--seeds", seeds, "Placement experiment: a range of seeds A-B, reported as means");
  app.add_option("--report", report, "Write the JSON report here");
  app.add_option("--decisions", decisions,
                 "Write every action gpuaasd took here, one JSON object a line (policy, t, "
                 "target, operation, rule, reason, body)");
  app.add_option("--compare", compare,
                 "Policies to run side by side, e.g. static-fifo,kueue-like,gpuaas");
  app.add_option("--chart", chart, "Write an SVG chart of the runs over time here");
  app.add_option("--policy", policy_files, "gpuaas policy files (instead of the scenario's)");
  app.add_option("--server", server,
                 "A NATS URL: run gpuaasd over this server instead of in-process");
  app.add_option("--plugins", plugins,
                 "Directory of workload plugins (default: beside the binary)");
  app.add_option("--hours", hours, "Trace replays: simulate only the first H hours");
  app.add_option("--services", services, "Azure replay: InferenceServices to spread requests over");
  bool elastic = false;
  double from_hours = 0;
  app.add_option("--from-hours", from_hours,
                 "Alibaba replay: start this many hours into the trace (pods created before are "
                 "left out)");
  app.add_flag("--elastic", elastic,
               "Alibaba replay: start with no nodes; each node shape is a pool that may grow to "
               "the trace's count (10 min per node), scaled by each policy");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  (void)gpuaas::telemetry::setup_logging(
      "text", std::getenv("GPUAAS_SIM_LOG") ? std::getenv("GPUAAS_SIM_LOG") : "warn");

  if (placement) {
    if (pods_file.empty() || nodes_file.empty())
      return std::cerr << "gpuaas-sim: --placement needs --pods and --nodes\n", 2;
    uint64_t first = app.count("--seed") ? seed : 42, last = first;
    if (!seeds.empty()) {
      const auto dash = seeds.find('-');
      try {
        first = std::stoull(seeds.substr(0, dash));
        last = dash == std::string::npos ? first : std::stoull(seeds.substr(dash + 1));
      } catch (const std::exception&) {
        return std::cerr << "gpuaas-sim: --seeds: expected A-B, e.g. 42-51\n", 2;
      }
    }
    return run_placement(pods_file, nodes_file, load, first, last, candidates, report);
  }

  std::vector<Baseline> policies = {Baseline::kGpuaas};
  if (!compare.empty()) {
    auto p = parse_baselines(compare);
    if (!p) return std::cerr << "gpuaas-sim: --compare: " << p.status().message() << "\n", 2;
    policies = *p;
  }
  SimOptions options;
  options.seed = seed;
  options.server = server;
  options.plugins_dir = plugins.empty() ? default_plugins_dir() : plugins;
  if (!policy_files.empty()) {
    auto texts = read_policy_files(policy_files);
    if (!texts) return std::cerr << "gpuaas-sim: " << texts.status().message() << "\n", 1;
    options.policies = *texts;
  }
  gpuaas::Result<Scenario> scenario = gpuaas::Status::invalid(
      "nothing to simulate: give --scenario, --alibaba, --azure-llm or --placement (see --help)");
  if (!scenario_file.empty()) {
    scenario = load_scenario(scenario_file);
  } else if (!alibaba.empty()) {
    scenario = alibaba_scenario(alibaba[0], alibaba[1], hours, elastic, std::chrono::minutes(10),
                                from_hours);
  } else if (!azure.empty()) {
    scenario = azure_llm_scenario(azure, services, hours, seed);
  } else {
    std::cerr << "gpuaas-sim: " << scenario.status().message() << "\n";
    return 2;
  }
  if (!scenario) return std::cerr << "gpuaas-sim: " << scenario.status().message() << "\n", 1;
  return run_scenario(*scenario, policies, options, report, chart, decisions, !compare.empty());
}
