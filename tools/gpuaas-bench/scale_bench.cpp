#include "scale_bench.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "admission/stage/queue_metrics.hpp"
#include "bench_env.hpp"
#include "gpuaas/base/archive.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pipeline/decision_sink.hpp"
#include "scale_scene.hpp"
#include "scaleout/scale_out_stage.hpp"

namespace gpuaas::bench {
namespace {

using nlohmann::json;
using scale::kT0;
using scale::Scene;
using Clock = std::chrono::steady_clock;
using wire::EventTime;

constexpr auto kScan = core::scaleout::PoolScaler::kScanInterval;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Nearest-rank percentile of a sorted sample.
double pct(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double rss_mb() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  in >> size >> resident;
  return static_cast<double>(resident * sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The stage with its own metrics, as the daemon's pipeline holds it.
struct Stage {
  telemetry::Registry registry;
  core::ScaleOutStage stage{&registry};
};

struct PassResult {
  double ms = 0;
  int64_t replicas = 0;  // the pools' nodes, registered and asked for, after the pass
  std::size_t actions = 0, evictions = 0;
  json pools;
};

// One pass of the stage at event time `now`, as DecisionPipeline::after_event runs it.
PassResult pass(Scene& s, core::ScaleOutStage& stage, core::DecisionSink& sink, EventTime now) {
  s.model.advance(now);
  sink.begin("bench/" + std::to_string((now - kT0) / kScan), now, &s.model);
  const std::set<std::string> waking;
  const auto t = Clock::now();
  auto out = stage.pass(s.model, *s.engine, waking, {}, sink);
  PassResult r;
  r.ms = ms(Clock::now() - t);
  r.actions = sink.take().size();
  r.evictions = out.evictions.size();
  r.pools = json::parse(stage.scaler().json(now));
  for (const auto& p : r.pools) r.replicas += p["replicas"].get<int64_t>();
  return r;
}

// A stage restored from `state` (what the first look learned), as every timed decision starts.
std::unique_ptr<Stage> restored(const Scene& s, const std::string& state) {
  auto st = std::make_unique<Stage>();
  st->stage.set_policy(*s.set);
  base::ArchiveReader r(state);
  st->stage.load_state(r);
  if (!r.ok()) {
    std::cerr << "scale: the scaler's snapshot did not load: " << r.error() << "\n";
    return nullptr;
  }
  return st;
}

json times(std::vector<double> v, const std::string& prefix) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return {{prefix + "_p50", round3(pct(v, 0.5))},
          {prefix + "_p90", round3(pct(v, 0.9))},
          {prefix + "_max", round3(v.back())},
          {prefix + "_min", round3(v.front())},
          {prefix + "_mean", round3(sum / static_cast<double>(v.size()))}};
}

json plans(const json& pools) {
  json out = json::array();
  for (const auto& p : pools) {
    const auto& plan = p["plan"];
    out.push_back({{"pool", p["name"]},
                   {"replicas", p["replicas"]},
                   {"desired", plan["desired"]},
                   {"add", plan["add"]},
                   {"deadlines_at_risk", plan["deadlines_at_risk"]},
                   {"backlog_gpus", plan["backlog_gpus"]},
                   {"rule", plan["rule"]}});
  }
  return out;
}

}  // namespace

int run_scale_bench(const ScaleBenchOptions& o) {
  if (o.nodes < o.pools || o.pools <= 0 || o.pending < 0 || o.tenants <= 0 ||
      o.gpus_per_node <= 0 || o.passes <= 0 || o.fill < 0 || o.fill > 1 || o.max_nodes_factor < 1) {
    std::cerr << "scale: need nodes >= pools > 0, tenants, gpus-per-node, passes > 0, "
                 "0 <= fill <= 1 and max-nodes-factor >= 1\n";
    return 2;
  }
  // Each scale-up is logged at info: a line to the terminal per pool, not planning, and stdout
  // must end with the JSON line.
  spdlog::set_level(spdlog::level::warn);
  std::cerr << "scale: " << o.nodes << " nodes in " << o.pools << " pools, " << o.pending
            << " pending workloads, " << o.tenants << " ClusterQueues\n";
  const auto t_setup = Clock::now();
  auto scene = scale::build_scene(o);
  if (!scene) return 2;
  const double setup_s = ms(Clock::now() - t_setup) / 1000;
  int64_t pending_for_nodes = 0;
  for (const auto& d : scene->engine->node_demand()) pending_for_nodes += d.pending ? 1 : 0;
  std::cerr << "scale: scene built in " << setup_s << " s: " << scene->running
            << " workloads running, " << pending_for_nodes << " waiting for nodes\n";

  core::QueueMetrics queue_metrics(nullptr);
  core::DecisionSink sink(bus::Subjects("gpuaas"), "gpuaas-bench", nullptr, &scene->interpreter,
                          queue_metrics);
  // The first look at the pools only learns their nodes (PoolScaler::pass); every timed decision
  // starts from what it learned, one scan interval later.
  std::string learned;
  double first_look_ms = 0;
  {
    Stage st;
    st.stage.set_policy(*scene->set);
    first_look_ms = pass(*scene, st.stage, sink, kT0).ms;
    base::ArchiveWriter w;
    st.stage.save_state(w);
    learned = w.take();
  }
  const EventTime t1 = kT0 + kScan;
  std::vector<double> decision_ms;
  PassResult first;
  for (int i = 0; i < o.passes; ++i) {
    auto st = restored(*scene, learned);
    if (!st) return 2;
    auto r = pass(*scene, st->stage, sink, t1);
    decision_ms.push_back(r.ms);
    if (i == 0) first = std::move(r);
  }
  // Then every scan interval while the nodes asked for are still coming, as until they register.
  std::vector<double> steady_ms;
  PassResult last;
  {
    auto st = restored(*scene, learned);
    if (!st) return 2;
    (void)pass(*scene, st->stage, sink, t1);
    for (int i = 0; i < o.passes; ++i) {
      last = pass(*scene, st->stage, sink, t1 + kScan * (i + 1));
      steady_ms.push_back(last.ms);
    }
  }
  const int64_t proposed = first.replicas - o.nodes;
  json out = {{"bench", "scale"},
              {"nodes", o.nodes},
              {"pending", o.pending},
              {"pools", o.pools},
              {"tenants", o.tenants},
              {"gpus_per_node", o.gpus_per_node},
              {"passes", o.passes},
              {"seed", o.seed},
              {"fill", o.fill},
              {"deadline_share", o.deadline_share},
              {"running_workloads", scene->running},
              {"running_pods", scene->running_pods},
              {"running_gpus", scene->running_gpus},
              {"pending_for_nodes", pending_for_nodes},
              {"pending_with_deadline", scene->pending_deadlines},
              {"first_look_ms", round3(first_look_ms)}};
  out.update(times(decision_ms, "pass_ms"));
  out.update(times(steady_ms, "steady_ms"));
  out["goal_ms"] = 1.0;
  out["goal_met"] = out["pass_ms_p50"].get<double>() <= 1.0;
  out["scale_up_nodes"] = proposed;
  out["actions"] = first.actions;
  out["evictions"] = first.evictions;
  out["plan"] = plans(first.pools);
  out["steady_added_nodes"] = last.replicas - first.replicas;
  out["setup_s"] = round3(setup_s);
  out["rss_mb"] = round3(rss_mb());
  out["machine"] = {{"nproc", std::thread::hardware_concurrency()}, {"loadavg", loadavg()}};

  std::cout << "scale-out pass: " << o.nodes << " nodes in " << o.pools << " pools, "
            << scene->running << " workloads running (" << scene->running_gpus << " GPUs), "
            << pending_for_nodes << " waiting for nodes\n"
            << "  decision pass (" << o.passes << "x): p50 " << out["pass_ms_p50"] << " ms, p90 "
            << out["pass_ms_p90"] << " ms, max " << out["pass_ms_max"]
            << " ms (goal <= 1 ms: " << (out["goal_met"].get<bool>() ? "met" : "missed") << ")\n"
            << "  steady pass, nodes coming (" << o.passes << "x): p50 " << out["steady_ms_p50"]
            << " ms, p90 " << out["steady_ms_p90"] << " ms, max " << out["steady_ms_max"] << " ms\n"
            << "  first look (learns the nodes): " << out["first_look_ms"] << " ms\n"
            << "  proposed " << proposed << " node(s) in " << first.actions << " action(s)\n";
  for (const auto& p : out["plan"])
    std::cout << "    " << p["pool"].get<std::string>() << ": " << p["replicas"] << " nodes ("
              << p["rule"].get<std::string>() << "), add " << p["add"].dump() << "\n";
  std::cout << out.dump() << std::endl;
  if (proposed <= 0) {
    std::cerr << "scale: the pass proposed no nodes: the scene has no backlog above capacity\n";
    return 1;
  }
  return 0;
}

}  // namespace gpuaas::bench
