#include "end_to_end_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench_env.hpp"
#include "bench_server.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/policy_set_object.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "soak_probes.hpp"
#include "soak_scene.hpp"

namespace gpuaas::bench {
namespace {

using nlohmann::json;
using Out = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

double since_s(Clock::time_point t0) { return seconds_since(t0); }

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

// gpuaasd's applied stream sequence and pending workloads, from its /metrics.
struct Progress {
  double applied = -1, pending_workloads = -1, deadlettered = 0;
};
Progress progress(int admin_port) {
  int64_t lines = 0;
  const auto m = metric_sums(http_get(admin_port, "/metrics"), &lines);
  auto get = [&](const char* k, double none) {
    auto it = m.find(k);
    return it == m.end() ? none : it->second;
  };
  return {get("gpuaas_intake_last_applied_sequence", -1), get("gpuaas_pending_workloads", -1),
          get("gpuaas_events_deadlettered_total", 0)};
}

// Each Job's admit action as it arrives: its first arrival counts.
struct Admits {
  std::mutex mu;
  std::unordered_map<std::string, Clock::time_point> at;  // by Job name
  Clock::time_point last{};
  std::size_t size() {
    std::lock_guard lock(mu);
    return at.size();
  }
};

// The engine alone at the same sizes: `gpuaas-bench admission`'s admissions per second, or -1.
double engine_rate(const EndToEndOptions& o, Out& out) {
  const std::string args = "admission --workloads " + std::to_string(o.engine_workloads) +
                           " --queues " + std::to_string(o.mix.cluster_queues) + " --cohorts " +
                           std::to_string(o.mix.cohorts) + " --nodes " +
                           std::to_string(o.mix.nodes);
  out["engine_command"] = "gpuaas-bench " + args;
  const std::string cmd = self_dir() + "/gpuaas-bench " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string last;
  char buf[1 << 16];
  while (std::fgets(buf, sizeof buf, p) != nullptr) last = buf;
  ::pclose(p);
  const json j = json::parse(last, nullptr, false);
  if (!j.is_object()) return -1;
  out["engine_p50_decision_us"] = j.value("p50_decision_us", -1.0);
  return j.value("admissions_per_second", -1.0);
}

// The Jobs, unpaced, at most `window` events ahead of gpuaasd's acks; their event time runs at
// the mix's job rate. Records each Job's publish time; "" on success.
std::string publish_jobs(const EndToEndOptions& o, bus::Bus& pub, bus::Bus& mon,
                         SoakTraffic& traffic, uint64_t first_seq, const Clock::time_point t0,
                         std::unordered_map<std::string, Clock::time_point>& sent) {
  const auto cfg = core::default_config(o.root);
  bus::ConsumerSettings cs;
  cs.stream = cfg.events_stream.name;
  cs.durable = cfg.intake.durable;
  uint64_t published = 0, acked = 0;
  const auto deadline = t0 + o.timeout;
  for (int j = 0; traffic.counts().jobs_submitted < static_cast<uint64_t>(o.jobs); ++j) {
    const auto elapsed = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(static_cast<double>(j) / std::max(1.0, o.mix.job_rate)));
    for (;;) {
      const uint64_t before = traffic.counts().jobs_submitted;
      auto m = traffic.next_due(elapsed, t0 + elapsed);
      if (!m) break;
      if (auto s = pub.publish_stored_async(*m, std::string(*m->header("ce-id"))); !s)
        return s.message();
      if (traffic.counts().jobs_submitted > before)
        sent.emplace("soak-job-" + std::to_string(before), Clock::now());
      ++published;
    }
    while (first_seq + published > acked + o.window) {
      if (Clock::now() > deadline) return "gpuaasd did not keep up within --timeout";
      if (auto pos = mon.consumer_position(cs); pos.is_ok()) acked = pos->ack_floor;
      if (first_seq + published > acked + o.window) std::this_thread::sleep_for(milliseconds(2));
    }
  }
  if (auto s = pub.wait_stored(seconds(60)); !s) return s.message();
  return {};
}

// Waits (bounded) until gpuaasd applied the scene and counts every preloaded Job as pending.
bool wait_preload(const EndToEndOptions& o, int admin_port, std::size_t events, Child& daemon) {
  auto report = Clock::now() + seconds(10);
  for (auto end = Clock::now() + o.timeout; Clock::now() < end && daemon.alive();) {
    const Progress p = progress(admin_port);
    if (p.applied >= static_cast<double>(events) && p.pending_workloads >= o.mix.pending)
      return true;
    if (Clock::now() >= report) {
      report += seconds(10);
      std::cerr << "end-to-end: preload: applied " << p.applied << " of " << events
                << ", pending workloads " << p.pending_workloads << "\n";
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  return false;
}

}  // namespace

int run_end_to_end_bench(const EndToEndOptions& o) {
  const json load_before = loadavg();
  auto manifests = kube::read_manifests(find_node_file(o.node_file));
  if (!manifests || manifests->empty()) {
    std::cerr << "gpuaas-bench end-to-end: cannot read a Node manifest; pass --node-file\n";
    return 3;
  }
  const auto cfg = core::default_config(o.root);
  BenchBus bb;
  if (!open_bench_bus(o.server, "gpuaas-bench end-to-end", cfg, bb)) return 3;
  const std::string& url = bb.url;
  auto& pub = bb.pub;
  auto& mon = bb.mon;
  std::string dir = (std::filesystem::temp_directory_path() / "gpuaas-e2e-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 3;
  SoakMix mix = o.mix;
  mix.admit_timeout = std::chrono::hours(24 * 365);  // no Job gives up: each is admitted or not
  mix.scrape_seconds = 0;                            // the admission path alone
  std::ofstream(dir + "/policy.yaml") << soak_policy_yaml(mix);
  auto policy = core::policy_set_object({dir + "/policy.yaml"});
  if (!policy) {
    std::cerr << "gpuaas-bench end-to-end: policy: " << policy.status().message() << "\n";
    return 3;
  }
  const auto t_scene = Clock::now();
  SoakTraffic traffic(mix, o.root, json::parse((*manifests)[0].json),
                      wire::EventTime(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())));
  const auto scene = traffic.setup(*policy);
  if (auto st = publish_all(*pub, scene); !st) {
    std::cerr << "gpuaas-bench end-to-end: publishing the scene: " << st.message() << "\n";
    return 3;
  }
  DaemonChild started = start_gpuaasd(dir, o.root, url, o.gpuaasd, o.plugins);
  Child& daemon = *started.child;
  const int admin_port = started.admin_port;
  std::cerr << "end-to-end: gpuaasd pid " << daemon.pid() << " (log " << dir << "/gpuaasd.log), "
            << scene.size() << " scene events\n";
  Out out = {{"bench", "end-to-end"}, {"scene", soak_scene_json("", mix)}, {"jobs", o.jobs}};
  out["scene"].erase("name");
  out["scene"].erase("scrape_seconds");
  out["scene"].erase("run_seconds");
  if (!wait_preload(o, admin_port, scene.size(), daemon)) {
    out["error"] = "gpuaasd did not apply the scene in time";
    out["gpuaasd_log"] = dir + "/gpuaasd.log";
    std::cout << out.dump() << "\n";
    return 3;
  }
  out["preload_seconds"] = round3(since_s(t_scene));
  std::cerr << "end-to-end: scene applied in " << out["preload_seconds"] << " s; " << o.jobs
            << " Jobs now\n";

  Admits admits;
  auto sub = mon->subscribe(bus::Subjects(o.root).all(bus::SubjectCategory::kActions),
                            [&](const bus::Message& m) {
                              const auto now = Clock::now();
                              auto admit = admit_action(m);
                              if (!admit) return;
                              std::lock_guard lock(admits.mu);
                              if (admits.at.emplace(admit->name, now).second) admits.last = now;
                            });
  if (!sub) {
    std::cerr << "gpuaas-bench end-to-end: " << sub.status().message() << "\n";
    return 3;
  }
  std::unordered_map<std::string, Clock::time_point> sent;
  const auto t0 = Clock::now();
  std::string error = publish_jobs(o, *pub, *mon, traffic, scene.size(), t0, sent);
  const double publish_s = since_s(t0);
  // Until every Job is admitted, or none was for 10 s after gpuaasd applied all (bounded).
  const auto last_seq = static_cast<double>(traffic.counts().events);  // the scene's included
  for (auto quiet = Clock::now(); error.empty() && admits.size() < sent.size();) {
    if (Clock::now() > t0 + o.timeout || !daemon.alive()) break;
    const std::size_t before = admits.size();
    std::this_thread::sleep_for(milliseconds(100));
    if (admits.size() != before) quiet = Clock::now();
    if (progress(admin_port).applied >= last_seq && Clock::now() - quiet > seconds(10)) break;
  }
  const Progress end = progress(admin_port);
  std::vector<double> lat_ms;
  double admit_s = 0;
  {
    std::lock_guard lock(admits.mu);
    for (const auto& [name, at] : admits.at)
      if (auto it = sent.find(name); it != sent.end())
        lat_ms.push_back(std::chrono::duration<double, std::milli>(at - it->second).count());
    if (!admits.at.empty()) admit_s = std::chrono::duration<double>(admits.last - t0).count();
  }
  const auto admitted = static_cast<double>(lat_ms.size());
  const double rate = admit_s > 0 ? admitted / admit_s : 0;
  out["jobs_published"] = sent.size();
  out["events_published"] = traffic.counts().events - scene.size();
  out["publish_seconds"] = round3(publish_s);
  out["admitted"] = lat_ms.size();
  out["admit_seconds"] = round3(admit_s);
  out["admissions_per_second"] = std::round(rate);
  out["publish_to_admit_ms"] = {{"p50", round3(pct(lat_ms, 0.5))},
                                {"p99", round3(pct(lat_ms, 0.99))},
                                {"max", round3(pct(lat_ms, 1.0))}};
  out["pending_workloads_at_end"] = end.pending_workloads;
  out["deadlettered"] = end.deadlettered;
  out["gpuaasd_rss_mb"] = std::round(static_cast<double>(rss_bytes(daemon.pid())) / (1 << 20));
  (void)daemon.stop(SIGTERM, seconds(60));
  if (o.engine) {
    std::cerr << "end-to-end: the engine alone at the same sizes\n";
    const double engine = engine_rate(o, out);
    out["engine_admissions_per_second"] = std::round(engine);
    out["ratio_to_engine"] = engine > 0 ? round3(rate / engine) : -1.0;
  }
  out["machine"] = {{"nproc", std::thread::hardware_concurrency()},
                    {"loadavg_before", load_before},
                    {"loadavg_after", loadavg()}};
  const bool all = error.empty() && lat_ms.size() == sent.size();
  if (!error.empty()) out["error"] = error;
  if (!all) {
    out["gpuaasd_log"] = dir + "/gpuaasd.log";
  } else {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::cerr << "end-to-end: " << lat_ms.size() << " of " << sent.size() << " Jobs admitted in "
            << round3(admit_s) << " s: " << std::round(rate) << "/s"
            << (o.engine ? ", " + out["ratio_to_engine"].dump() + " of the engine alone" : "")
            << "\n";
  std::cout << out.dump() << "\n";
  return all ? 0 : 1;
}

}  // namespace gpuaas::bench
