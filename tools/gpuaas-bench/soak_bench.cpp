#include "soak_bench.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench_env.hpp"
#include "bench_server.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "soak_probes.hpp"
#include "soak_scene.hpp"

namespace gpuaas::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

struct Point {
  double t = 0;  // seconds since the paced phase began
  int64_t rss = -1;
  int64_t pending = -1, ack_pending = -1, acked = -1, stream_last = -1;
  int64_t applied = -1, processed = -1, deadlettered = -1, pending_workloads = -1;
  int64_t metrics_lines = -1, metrics_bytes = -1;
};

json point_json(const Point& p) {
  return {{"t", std::round(p.t * 10) / 10},
          {"rss_bytes", p.rss},
          {"pending", p.pending},
          {"ack_pending", p.ack_pending},
          {"acked", p.acked},
          {"stream_last", p.stream_last},
          {"last_applied_sequence", p.applied},
          {"events_processed", p.processed},
          {"deadlettered", p.deadlettered},
          {"pending_workloads", p.pending_workloads},
          {"metrics_lines", p.metrics_lines},
          {"metrics_bytes", p.metrics_bytes}};
}

// The daemon's own counters from /metrics.
void read_metrics(int port, Point& p) {
  std::string text = http_get(port, "/metrics");
  if (text.empty()) return;
  int64_t lines = 0;
  auto sums = metric_sums(text, &lines);
  auto get = [&](const char* name) {
    auto it = sums.find(name);
    return it == sums.end() ? int64_t{-1} : static_cast<int64_t>(std::llround(it->second));
  };
  p.applied = get("gpuaas_intake_last_applied_sequence");
  p.processed = get("gpuaas_events_processed_total");
  p.deadlettered = std::max<int64_t>(0, get("gpuaas_events_deadlettered_total"));
  p.pending_workloads = get("gpuaas_pending_workloads");
  p.metrics_lines = lines;
  p.metrics_bytes = static_cast<int64_t>(text.size());
}

// One sample: the daemon's RSS, the work consumer's backlog (consumer info) and /metrics.
Point sample(bus::Bus& bus, const core::DaemonConfig& cfg, pid_t pid, int admin_port, double t) {
  Point p;
  p.t = t;
  p.rss = rss_bytes(pid);
  bus::ConsumerSettings cs;
  cs.stream = cfg.events_stream.name;
  cs.durable = cfg.intake.durable;
  if (auto pos = bus.consumer_position(cs); pos.is_ok()) {
    p.stream_last = static_cast<int64_t>(pos->stream_last);
    p.pending = static_cast<int64_t>(pos->stream_last - std::min(pos->stream_last, pos->delivered));
    p.ack_pending = static_cast<int64_t>(pos->delivered - std::min(pos->delivered, pos->ack_floor));
    p.acked = static_cast<int64_t>(pos->ack_floor);
  }
  read_metrics(admin_port, p);
  return p;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

json latency_json(const std::vector<double>& v) {
  return {{"count", v.size()},
          {"p50", round3(percentile(v, 0.50))},
          {"p90", round3(percentile(v, 0.90))},
          {"p99", round3(percentile(v, 0.99))},
          {"p999", round3(percentile(v, 0.999))},
          {"max", round3(v.empty() ? 0 : *std::max_element(v.begin(), v.end()))}};
}

// Mean of `field` over the samples of quarter q (0..3) of the window (from, to] in seconds.
double quarter_mean(const std::vector<Point>& pts, double from, double to, int q,
                    int64_t Point::*field) {
  double sum = 0;
  int n = 0;
  for (const auto& p : pts) {
    if (p.t <= from || p.t > to + 1 || p.*field < 0) continue;
    int qi = std::min(3, static_cast<int>(4 * (p.t - from - 1e-6) / (to - from)));
    if (qi != q) continue;
    sum += static_cast<double>(p.*field);
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

struct Admission {
  std::string ns, name, patch;
  Clock::time_point at;
};

}  // namespace

int run_soak_bench(const SoakOptions& o) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const json load_before = loadavg();
  const std::string node_path = find_node_file(o.node_file);
  auto manifests = kube::read_manifests(node_path);
  if (!manifests || manifests->empty()) {
    std::cerr << "gpuaas-bench soak: cannot read a Node from " << node_path
              << "; pass --node-file\n";
    return 3;
  }
  auto cfg = core::default_config(o.root);
  BenchBus bb;
  if (!open_bench_bus(o.server, "gpuaas-bench soak", cfg, bb)) return 3;
  const std::string& url = bb.url;
  auto& pub = bb.pub;
  auto& mon = bb.mon;
  std::string dir = (std::filesystem::temp_directory_path() / "gpuaas-soak-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 3;
  std::ofstream(dir + "/policy.yaml") << soak_policy_yaml(o.mix);
  auto policy = core::policy_set_object({dir + "/policy.yaml"});
  if (!policy) {
    std::cerr << "gpuaas-bench soak: policy: " << policy.status().message() << "\n";
    return 3;
  }

  // The scene first: the policy and the nodes, applied before the clock starts.
  const auto t0 = Clock::now();
  SoakTraffic traffic(o.mix, o.root, json::parse((*manifests)[0].json),
                      wire::EventTime(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())));
  auto scene = traffic.setup(*policy);
  if (auto st = publish_all(*pub, scene); !st) {
    std::cerr << "gpuaas-bench soak: publishing the scene: " << st.message() << "\n";
    return 3;
  }
  const double scene_publish_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string extra =
      o.snapshot_every_events < 0
          ? std::string()
          : "snapshots: {everyEvents: " + std::to_string(o.snapshot_every_events) + "}\n";
  DaemonChild started = start_gpuaasd(dir, o.root, url, o.gpuaasd, o.plugins, extra);
  Child& daemon = *started.child;
  const int admin_port = started.admin_port;
  std::cerr << "soak: gpuaasd pid " << daemon.pid() << " (log " << dir << "/gpuaasd.log), "
            << scene.size() << " scene events\n";
  const pid_t daemon_pid = daemon.pid();  // read by the sampler while alive() may reset it
  Point first;
  // A preload has the daemon decide about every pending Job too: until all are counted.
  auto has_scene = [&] {
    return first.applied >= static_cast<int64_t>(scene.size()) &&
           (o.mix.pending == 0 || first.pending_workloads >= o.mix.pending);
  };
  const auto scene_bound = seconds(std::max<int64_t>(60, static_cast<int64_t>(scene.size()) / 50));
  auto report = Clock::now() + seconds(10);
  for (auto end = Clock::now() + scene_bound; Clock::now() < end && !g_interrupted;) {
    first = sample(*mon, cfg, daemon_pid, admin_port, 0);
    if (has_scene() || !daemon.alive()) break;
    if (Clock::now() >= report) {
      report += seconds(10);
      std::cerr << "soak: preload: applied " << first.applied << " of " << scene.size()
                << ", pending workloads " << first.pending_workloads << "\n";
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  if (!has_scene()) {
    std::cerr << "gpuaas-bench soak: gpuaasd did not apply the scene (see " << dir
              << "/gpuaasd.log)\n";
    return 3;
  }

  // Admission actions, as they arrive: the end of each Job's latency.
  std::mutex mu;
  std::vector<Admission> inbox;
  std::map<std::string, uint64_t> rules;
  auto sub = mon->subscribe(bus::Subjects(o.root).all(bus::SubjectCategory::kActions),
                            [&](const bus::Message& m) {
                              const auto at = Clock::now();
                              v1::Action a;
                              if (!a.ParseFromArray(m.data.data(), static_cast<int>(m.data.size())))
                                return;
                              std::lock_guard lock(mu);
                              ++rules[a.rule()];
                              if (auto admit = admit_action(m))
                                inbox.push_back({admit->ns, admit->name, admit->patch, at});
                            });
  if (!sub) {
    std::cerr << "gpuaas-bench soak: " << sub.status().message() << "\n";
    return 3;
  }

  // The sampler: its own connection and thread, so that a slow answer never delays publishing.
  const double duration = o.minutes * 60;
  // The verdict's window: after the warm-up, to the end of the paced phase.
  const double warmup = std::clamp(o.warmup_minutes * 60, 0.0, duration * 0.75);
  // Short runs sample more often, so that each quarter of the verdict has samples.
  const auto every = std::min<Clock::duration>(
      o.sample, std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>((duration - warmup) / 8)));
  std::vector<Point> points{first};
  std::atomic<bool> done{false};
  const auto start = Clock::now();
  std::thread sampler([&] {
    for (int k = 1; !done; ++k) {
      auto when = start + every * k;
      while (Clock::now() < when && !done) std::this_thread::sleep_for(milliseconds(50));
      if (done) break;
      double t = std::chrono::duration<double>(Clock::now() - start).count();
      Point p = sample(*mon, cfg, daemon_pid, admin_port, t);
      std::lock_guard lock(mu);
      points.push_back(p);
      std::cerr << "soak: t=" << std::lround(t) << "s rss=" << p.rss / (1 << 20)
                << " MiB pending=" << p.pending << " ack_pending=" << p.ack_pending
                << " applied=" << p.applied << " pending_workloads=" << p.pending_workloads
                << " metrics_lines=" << p.metrics_lines << "\n";
    }
  });

  // Paced publishing: every burst, publish what the rate owes by now; the events' time runs
  // with the steady clock.
  uint64_t published = 0;
  std::string error;
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  auto handle_admissions = [&] {
    std::vector<Admission> got;
    {
      std::lock_guard lock(mu);
      got.swap(inbox);
    }
    for (auto& a : got) traffic.admitted(a.ns, a.name, a.patch, a.at - start, a.at);
  };
  for (int64_t k = 1; error.empty() && !g_interrupted; ++k) {
    auto now = Clock::now();
    if (now >= end) break;
    handle_admissions();
    const auto elapsed = now - start;
    const auto owed =
        static_cast<uint64_t>(o.rate * std::chrono::duration<double>(elapsed).count());
    // With a scrape interval, what is due by now; else what the rate owes, scrapes filling it.
    const bool by_rate = o.mix.scrape_seconds <= 0;
    while (!by_rate || published < owed) {
      auto m = by_rate ? std::optional(traffic.next(elapsed, now)) : traffic.next_due(elapsed, now);
      if (!m) break;
      if (auto s = pub->publish_stored_async(*m, std::string(*m->header("ce-id"))); !s) {
        error = s.message();
        break;
      }
      ++published;
    }
    if (auto s = pub->wait_stored(seconds(30)); !s && error.empty()) error = s.message();
    if (!daemon.alive() && error.empty()) error = "gpuaasd exited during the soak";
    std::this_thread::sleep_until(start + o.burst * k);
  }
  const double publish_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // Drain: the daemon applies what is left (bounded), admissions still arriving are counted.
  Point last;
  for (auto stop = Clock::now() + o.drain; Clock::now() < stop && !g_interrupted;) {
    handle_admissions();
    last = sample(*mon, cfg, daemon_pid, admin_port,
                  std::chrono::duration<double>(Clock::now() - start).count());
    if (last.acked >= 0 && last.acked >= last.stream_last) break;
    std::this_thread::sleep_for(milliseconds(500));
  }
  std::this_thread::sleep_for(milliseconds(500));  // the last admissions in flight
  handle_admissions();
  const double drain_seconds =
      std::chrono::duration<double>(Clock::now() - start).count() - publish_seconds;
  done = true;
  sampler.join();
  sub->reset();
  const int daemon_exit = daemon.stop(SIGTERM, seconds(20));
  if (o.server) {
    for (const auto* s : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream})
      (void)pub->delete_stream(s->name);
  }

  // The verdict: memory and backlog flat between the quarters of the paced phase.
  const double pending_bound = o.pending_bound > 0 ? o.pending_bound : 2 * o.rate;
  const double rss_q2 = quarter_mean(points, warmup, duration, 1, &Point::rss);
  const double rss_q4 = quarter_mean(points, warmup, duration, 3, &Point::rss);
  const double rss_limit = rss_q2 * (1 + o.rss_growth) + o.rss_allowance_mib * (1 << 20);
  const bool rss_flat = rss_q2 > 0 && rss_q4 <= rss_limit;
  const double pend_q1 = quarter_mean(points, warmup, duration, 0, &Point::pending);
  const double pend_q4 = quarter_mean(points, warmup, duration, 3, &Point::pending);
  const double ackp_q1 = quarter_mean(points, warmup, duration, 0, &Point::ack_pending);
  const double ackp_q4 = quarter_mean(points, warmup, duration, 3, &Point::ack_pending);
  const bool pending_flat =
      pend_q4 <= pend_q1 + pending_bound && ackp_q4 <= ackp_q1 + pending_bound;
  const bool drained = last.acked >= 0 && last.acked >= last.stream_last;

  const auto& lat = traffic.latencies_ms();
  std::vector<double> lat_window;  // admissions inside the verdict's window
  for (std::size_t i = 0; i < lat.size(); ++i) {
    const double at = traffic.latency_times_s()[i];
    if (at > warmup && at <= duration) lat_window.push_back(lat[i]);
  }
  const auto& c = traffic.counts();
  json series = json::array();
  for (const auto& p : points) series.push_back(point_json(p));
  json out = {
      {"rate_asked", o.rate},
      {"rate_achieved", round3(static_cast<double>(published) / publish_seconds)},
      {"duration_seconds", round3(publish_seconds)},
      {"drain_seconds", round3(drain_seconds)},
      {"drained", drained},
      {"events",
       {{"published", published},
        {"scene", scene.size()},
        {"ticks", c.ticks},
        {"dcgm_scrapes", c.samples},
        {"job_events", c.job_events}}},
      {"jobs",
       {{"submitted", c.jobs_submitted},
        {"admitted", c.jobs_admitted},
        {"given_up", c.jobs_given_up},
        {"completed", c.jobs_completed},
        {"live_at_end", traffic.live_jobs()},
        {"admit_actions_for_unknown_jobs", c.admissions_unknown}}},
      {"actions_by_rule", rules},
      {"latency_ms", latency_json(lat)},
      {"latency_ms_in_window", latency_json(lat_window)},
      {"series", series},
      {"final", point_json(last)},
      {"verdict",
       {{"window_seconds", json::array({warmup, duration})},
        {"rss_q2_mean_bytes", std::llround(rss_q2)},
        {"rss_q4_mean_bytes", std::llround(rss_q4)},
        {"rss_growth", rss_q2 > 0 ? round3(rss_q4 / rss_q2 - 1) : 0},
        {"rss_limit_bytes", std::llround(rss_limit)},
        {"rss_flat", rss_flat},
        {"pending_q1_mean", round3(pend_q1)},
        {"pending_q4_mean", round3(pend_q4)},
        {"ack_pending_q1_mean", round3(ackp_q1)},
        {"ack_pending_q4_mean", round3(ackp_q4)},
        {"pending_bound", pending_bound},
        {"pending_flat", pending_flat}}},
      {"mix",
       {{"nodes", o.mix.nodes},
        {"gpus_per_node", o.mix.gpus_per_node},
        {"job_rate", o.mix.job_rate},
        {"run_seconds", std::chrono::duration<double>(o.mix.run_time).count()},
        {"tick_seconds", std::chrono::duration<double>(o.mix.tick_interval).count()}}},
      {"gpuaasd_exit", daemon_exit},
      {"machine",
       {{"nproc", std::thread::hardware_concurrency()},
        {"loadavg_before", load_before},
        {"loadavg_after", loadavg()}}},
      {"startup_seconds", round3(std::chrono::duration<double>(start - t0).count())},
  };
  out["latency_ms"]["what"] =
      "Job ADDED published -> its admit action received on the actions subject";
  out["snapshot_every_events"] =
      o.snapshot_every_events < 0 ? json("default") : json(o.snapshot_every_events);
  if (!o.scene.empty() || o.mix.cluster_queues > 0 || o.mix.pending > 0 ||
      o.mix.scrape_seconds > 0) {
    out["scene"] = soak_scene_json(o.scene, o.mix);
    out["preload"] = {
        {"events", scene.size()},
        {"publish_seconds", round3(scene_publish_seconds)},
        {"applied_seconds", round3(std::chrono::duration<double>(start - t0).count())},
        {"pending_workloads_at_start", first.pending_workloads}};
  }
  if (!error.empty()) out["error"] = error;
  if (!error.empty() || !(rss_flat && pending_flat)) out["gpuaasd_log"] = dir + "/gpuaasd.log";
  if (g_interrupted) out["interrupted"] = true;
  std::cout << out.dump() << "\n";
  std::error_code ec;
  if (!out.contains("gpuaasd_log")) std::filesystem::remove_all(dir, ec);
  if (!error.empty() || g_interrupted) return 1;
  return rss_flat && pending_flat ? 0 : 1;
}

}  // namespace gpuaas::bench
