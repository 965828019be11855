#include "restart_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "bench_env.hpp"
#include "bench_server.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/policy_set_object.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "soak_probes.hpp"

namespace gpuaas::bench {
namespace {

using nlohmann::json;
using Out = nlohmann::ordered_json;  // the result line, keys in the order they are told
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

double since_s(Clock::time_point t0) { return seconds_since(t0); }
double mib(int64_t bytes) { return std::round(static_cast<double>(bytes) / (1 << 20) * 10) / 10; }

int64_t peak_rss_bytes(pid_t pid) {  // VmHWM
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  return -1;
}

// The model's size as `gpuaasctl state --summary --json` gives it, and the rest of the summary
// without what belongs to one process (its intake counters).
struct Summary {
  bool ok = false;
  int64_t nodes = -1, workloads = -1, pods = -1;
  json rest;
  bool same_model(const Summary& o) const {
    return ok && o.ok && nodes == o.nodes && workloads == o.workloads && pods == o.pods;
  }
};

Summary summary(const std::string& ctl) {
  Summary s;
  FILE* p = ::popen((ctl + " state --summary --json 2>/dev/null").c_str(), "r");
  if (p == nullptr) return s;
  std::string out;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return s;
  json j = json::parse(out, nullptr, false);
  if (!j.is_object()) return s;
  auto total = [&](const char* k) {
    const json v = j.value(k, json::object()).value("total", json());
    return v.is_number_integer() ? v.get<int64_t>() : int64_t{-1};
  };
  s.nodes = total("nodes");
  s.workloads = total("workloads");
  s.pods = total("pods");
  j.erase("intake");
  s.rest = std::move(j);
  s.ok = true;
  return s;
}

double metric(const std::map<std::string, double>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? -1 : it->second;
}

std::map<std::string, double> metrics(int port) {
  int64_t lines = 0;
  return metric_sums(http_get(port, "/metrics"), &lines);
}

// Where the run lives: the server, the binaries, the config every gpuaasd gets.
struct Setup {
  std::string url, dir, gpuaasd, plugins, ctl, config;
};

// One gpuaasd process: its admin port (a new one each start) and its log.
struct Gpuaasd {
  std::unique_ptr<Child> child;
  int admin_port = 0;
  std::string log;
};

Gpuaasd start_daemon(const Setup& s, const std::string& name) {
  Gpuaasd d;
  d.admin_port = bus::NatsServerProcess::free_port();
  d.log = s.dir + "/" + name + ".log";
  d.child = std::make_unique<Child>(
      std::vector<std::string>{s.gpuaasd, "--config", s.config, "--server", s.url, "--admin",
                               "127.0.0.1:" + std::to_string(d.admin_port), "--plugins", s.plugins},
      d.log);
  return d;
}

// Publishes the history after the scene, unpaced: event time advances by 1/rate per event, and
// gpuaasd's admit actions are handed back to the traffic as they come (the bridge's part), so
// Jobs run their pods' lives on the nodes gpuaasd chose. Publishing stays at most `window`
// events ahead of the daemon's acks. "" on success, else what went wrong.
std::string publish_history(const RestartOptions& o, bus::Bus& pub, bus::Bus& mon,
                            SoakTraffic& traffic, uint64_t first, Child& daemon, Out& out) {
  std::mutex mu;
  std::vector<AdmitAction> inbox;
  auto sub = mon.subscribe(bus::Subjects(o.root).all(bus::SubjectCategory::kActions),
                           [&](const bus::Message& m) {
                             auto admit = admit_action(m);
                             if (!admit) return;
                             std::lock_guard lock(mu);
                             inbox.push_back(std::move(*admit));
                           });
  if (!sub) return sub.status().message();
  const auto core_settings = core::default_config(o.root);
  bus::ConsumerSettings cs;
  cs.stream = core_settings.events_stream.name;
  cs.durable = core_settings.intake.durable;
  const auto t0 = Clock::now();
  const auto deadline = t0 + o.apply_timeout;
  uint64_t acked = 0, waits = 0;
  for (uint64_t n = first; n < o.events; ++n) {
    const auto elapsed = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(static_cast<double>(n - first) / o.rate));
    if ((n - first) % 500 == 0) {
      std::vector<AdmitAction> got;
      {
        std::lock_guard lock(mu);
        got.swap(inbox);
      }
      for (auto& a : got) traffic.admitted(a.ns, a.name, a.patch, elapsed, t0 + elapsed);
      while (n > acked + o.window) {
        if (!daemon.alive()) return "gpuaasd exited while the history was published";
        if (Clock::now() > deadline) return "gpuaasd did not keep up within --apply-timeout";
        if (auto pos = mon.consumer_position(cs); pos.is_ok()) acked = pos->ack_floor;
        if (n > acked + o.window) {
          ++waits;
          std::this_thread::sleep_for(milliseconds(5));
        }
      }
    }
    bus::Message m = traffic.next(elapsed, t0 + elapsed);
    if (auto s = pub.publish_stored_async(m, std::string(*m.header("ce-id"))); !s)
      return s.message();
    if ((n + 1) % 100000 == 0)
      std::cerr << "restart: " << n + 1 << " events published, " << round3(since_s(t0)) << " s\n";
  }
  if (auto s = pub.wait_stored(seconds(60)); !s) return s.message();
  out["publish_s"] = round3(since_s(t0));
  out["publish_waits_for_gpuaasd"] = waits;
  const auto& c = traffic.counts();
  out["mix"] = {{"dcgm_scrapes", c.samples},
                {"job_and_pod_events", c.job_events},
                {"ticks", c.ticks},
                {"jobs_submitted", c.jobs_submitted},
                {"jobs_admitted", c.jobs_admitted},
                {"jobs_given_up", c.jobs_given_up},
                {"jobs_completed", c.jobs_completed},
                {"event_time_s", round3(static_cast<double>(o.events - first) / o.rate)}};
  return {};
}

// Waits (bounded) until gpuaasd applied the whole stream and no snapshot write is in flight.
bool wait_applied(const RestartOptions& o, Gpuaasd& d, uint64_t last, Clock::time_point t0,
                  Out& out) {
  double seen_writes = -2;
  for (auto end = t0 + o.apply_timeout; Clock::now() < end && d.child->alive();) {
    const auto m = metrics(d.admin_port);
    const double applied = metric(m, "gpuaas_intake_last_applied_sequence");
    const double writes = metric(m, "gpuaas_snapshot_write_seconds_count");
    if (applied >= static_cast<double>(last) && writes >= 1 && writes == seen_writes) {
      out["applied_s"] = round3(since_s(t0));
      return true;
    }
    seen_writes = applied >= static_cast<double>(last) ? writes : -2;
    std::this_thread::sleep_for(milliseconds(500));
  }
  return false;
}

// What the restarted daemon's log says about its recovery.
void read_recovery_log(const std::string& log, Out& out, const char* prefix) {
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  const std::string p = prefix;
  std::smatch m;
  if (std::regex_search(
          text, m, std::regex(R"(stream sequence (\d+), (\d+) bytes in (\d+) ms \((\d+) ms)"))) {
    out[p + "snapshot_sequence"] = std::stoll(m[1]);
    out[p + "snapshot_loaded_bytes"] = std::stoll(m[2]);
    out[p + "snapshot_load_ms"] = std::stoll(m[3]);
    out[p + "snapshot_read_ms"] = std::stoll(m[4]);
  }
  if (std::regex_search(text, m, std::regex(R"(replayed stream sequences \d+ to \d+ in (\d+) ms)")))
    out[p + "replay_ms"] = std::stoll(m[1]);
  if (std::regex_search(text, m, std::regex(R"((\d+) events rebuilt the model)")))
    out[p + "replayed_events"] = std::stoll(m[1]);
  // Each line's time since the first, for where the restart spends its time.
  std::istringstream lines(text);
  const std::regex stamp(R"(^\d{4}-\d\d-\d\dT(\d\d):(\d\d):(\d\d\.\d{3}) \S+\s+(.*)$)");
  double first = -1;
  for (std::string line; std::getline(lines, line);) {
    if (!std::regex_match(line, m, stamp)) continue;
    const double t = std::stod(m[1]) * 3600 + std::stod(m[2]) * 60 + std::stod(m[3]);
    if (first < 0) first = t;
    std::cerr << "restart:   +" << std::lround((t - first) * 1000) << " ms  "
              << m[4].str().substr(0, 110) << "\n";
  }
}

struct Restarted {
  double stop_s = 0, first_answer_s = -1, ready_s = -1;
  int stop_exit = 0;
  Summary got;
};

// Stops `d` with `sig` and starts it again; the time from the signal until `gpuaasctl state`
// answers with the model it had before (polled, bounded).
Restarted restart(const RestartOptions& o, const Setup& s, Gpuaasd& d, int sig, const Summary& want,
                  const std::string& name) {
  Restarted r;
  const auto t0 = Clock::now();
  r.stop_exit = d.child->stop(sig, seconds(120));
  r.stop_s = since_s(t0);
  d = start_daemon(s, name);
  for (auto end = t0 + o.ready_timeout; Clock::now() < end && d.child->alive();) {
    const auto poll = Clock::now();
    r.got = summary(s.ctl);
    if (r.got.ok && r.first_answer_s < 0) r.first_answer_s = since_s(t0);
    if (r.got.same_model(want)) {
      r.ready_s = since_s(t0);
      break;
    }
    std::this_thread::sleep_until(poll + o.poll);
  }
  return r;
}

// `key`: the ready time; the rest under `prefix` (kill_, term_).
void record_restart(const Restarted& r, const Summary& want, const Gpuaasd& d, const char* key,
                    const std::string& p, Out& out, std::vector<std::string>& problems) {
  out[key] = r.ready_s < 0 ? json(nullptr) : json(round3(r.ready_s));
  out[p + "stop_s"] = round3(r.stop_s);
  out[p + "first_answer_s"] = r.first_answer_s < 0 ? json(nullptr) : json(round3(r.first_answer_s));
  out[p + "same_summary"] = r.got.ok && r.got.rest == want.rest;
  if (r.ready_s < 0)
    problems.push_back(p + "restart: no answer with the model before it (nodes " +
                       std::to_string(r.got.nodes) + ", workloads " +
                       std::to_string(r.got.workloads) + ", pods " + std::to_string(r.got.pods) +
                       "); log " + d.log);
  read_recovery_log(d.log, out, p.c_str());
  const pid_t pid = d.child->pid();
  out[p + "rss_mb"] = mib(rss_bytes(pid));
  out[p + "peak_rss_mb"] = mib(peak_rss_bytes(pid));
}

// gpuaasd's snapshot bucket (Recovery::open_snapshots) for the default settings.
std::string snapshot_bucket(const core::DaemonConfig& cfg) {
  const std::string& events = cfg.events_stream.name;
  return events.substr(0, events.rfind('_')) + "_SNAPSHOT";
}

// The stored snapshot as a reader gets it: its size and how long reading it takes.
void read_stored_snapshot(bus::Bus& bus, const core::DaemonConfig& cfg, Out& out) {
  bus::KvSettings kv;  // as gpuaasd opens it, so that opening changes nothing
  kv.bucket = snapshot_bucket(cfg);
  kv.replicas = cfg.snapshots.replicas;
  auto bucket = bus.open_kv(kv);
  if (!bucket) return;
  const auto t0 = Clock::now();
  auto got = bus::get_chunked(**bucket, "state." + cfg.intake.durable);
  if (!got || !*got) return;
  out["snapshot_stored_bytes"] = (*got)->value.size();
  out["snapshot_get_ms"] = std::lround(since_s(t0) * 1000);
}

// The scene and the history into the stream, gpuaasd applying them as they come. "" on success.
std::string fill(const RestartOptions& o, const Setup& s, bus::Bus& pub, bus::Bus& mon, Gpuaasd& d,
                 Out& out) {
  auto manifests = kube::read_manifests(find_node_file(o.node_file));
  if (!manifests || manifests->empty()) return "cannot read a Node manifest; pass --node-file";
  std::ofstream(s.dir + "/policy.yaml") << soak_policy_yaml(o.mix);
  auto policy = core::policy_set_object({s.dir + "/policy.yaml"});
  if (!policy) return "policy: " + policy.status().message();
  // The history ends about now in event time.
  const auto span = std::chrono::duration<double>(static_cast<double>(o.events) / o.rate);
  SoakTraffic traffic(o.mix, o.root, json::parse((*manifests)[0].json),
                      wire::EventTime(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch() - span)));
  const auto scene = traffic.setup(*policy);
  if (scene.size() >= o.events) return "--events must exceed the scene (--nodes + 1)";
  if (auto st = publish_all(pub, scene); !st) return st.message();
  d = start_daemon(s, "first");
  std::cerr << "restart: gpuaasd pid " << d.child->pid() << " (log " << d.log << "), "
            << scene.size() << " scene events\n";
  const auto t0 = Clock::now();
  if (auto e = publish_history(o, pub, mon, traffic, scene.size(), *d.child, out); !e.empty())
    return e;
  if (!wait_applied(o, d, o.events, t0, out)) return "gpuaasd did not apply the history in time";
  return {};
}

// Snapshot figures and the model as the first daemon holds it, before it is killed.
Summary before_kill(const RestartOptions& o, const Setup& s, Gpuaasd& d, bus::Bus& mon, Out& out) {
  const auto m = metrics(d.admin_port);
  out["snapshots_written"] = metric(m, "gpuaas_snapshots_written_total");
  out["snapshot_bytes"] = std::llround(metric(m, "gpuaas_snapshot_bytes"));
  const double count = metric(m, "gpuaas_snapshot_write_seconds_count");
  out["snapshot_write_ms"] =
      count > 0 ? round3(metric(m, "gpuaas_snapshot_write_seconds_sum") / count * 1000) : -1.0;
  read_stored_snapshot(mon, core::default_config(o.root), out);
  out["gpuaasd_rss_mb"] = mib(rss_bytes(d.child->pid()));
  out["gpuaasd_peak_rss_mb"] = mib(peak_rss_bytes(d.child->pid()));
  Summary want = summary(s.ctl);
  out["nodes"] = want.nodes;
  out["workloads"] = want.workloads;
  out["pods"] = want.pods;
  return want;
}

void cleanup_streams(bus::Bus& bus, const core::DaemonConfig& cfg) {
  for (const auto* st : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream})
    (void)bus.delete_stream(st->name);
  (void)bus.delete_kv(snapshot_bucket(cfg));
}

}  // namespace

int run_restart_bench(const RestartOptions& o) {
  const json load_before = loadavg();
  Setup s;
  const auto cfg = core::default_config(o.root);
  BenchBus bb;
  if (!open_bench_bus(o.server, "gpuaas-bench restart", cfg, bb)) return 3;
  s.url = bb.url;
  auto& pub = bb.pub;
  auto& mon = bb.mon;
  (void)pub->delete_kv(snapshot_bucket(cfg));  // a run before this one left no snapshot behind
  s.dir = (std::filesystem::temp_directory_path() / "gpuaas-restart-XXXXXX").string();
  if (::mkdtemp(s.dir.data()) == nullptr) return 3;
  const std::string bin = self_dir();
  s.gpuaasd = o.gpuaasd.empty() ? bin + "/gpuaasd" : o.gpuaasd;
  s.plugins = o.plugins.empty() ? bin + "/../plugins" : o.plugins;
  s.ctl = (o.gpuaasctl.empty() ? bin + "/gpuaasctl" : o.gpuaasctl) + " --server " + s.url +
          " --subject-root " + o.root;
  s.config = s.dir + "/gpuaasd.yaml";
  std::ofstream(s.config) << "subjectRoot: " << o.root
                          << "\ntickInterval: 0s\npolicyWatchInterval: 0s\npolicyFromStream: true\n"
                          << "snapshots: {everyEvents: " << o.every_events << "}\n";
  Out out = {{"bench", "restart"}, {"events", o.events}, {"every_events", o.every_events}};
  Gpuaasd d;
  if (auto e = fill(o, s, *pub, *mon, d, out); !e.empty()) {
    out["error"] = e;
    out["gpuaasd_log"] = d.log;
    std::cout << out.dump() << "\n";
    return 3;
  }
  std::cerr << "restart: " << o.events << " events applied (publish " << out["publish_s"]
            << " s, all applied " << out["applied_s"] << " s)\n";
  const Summary want = before_kill(o, s, d, *mon, out);
  std::vector<std::string> problems;
  if (!want.ok) problems.push_back("gpuaasctl state did not answer before the restart");
  if (want.nodes != o.mix.nodes)
    problems.push_back("nodes " + std::to_string(want.nodes) + ", published " +
                       std::to_string(o.mix.nodes));
  std::cerr << "restart: SIGKILL and start again\n";
  const Restarted crash = restart(o, s, d, SIGKILL, want, "after-kill");
  record_restart(crash, want, d, "ready_s", "kill_", out, problems);
  out["replayed_events"] = out.value("kill_replayed_events", json(nullptr));
  if (o.clean) {
    std::cerr << "restart: SIGTERM and start again\n";
    const Restarted clean = restart(o, s, d, SIGTERM, want, "after-term");
    record_restart(clean, want, d, "ready_s_clean", "term_", out, problems);
    if (clean.stop_exit != 0)
      problems.push_back("SIGTERM: gpuaasd exited " + std::to_string(clean.stop_exit));
  }
  out["restarted_nodes"] = crash.got.nodes;
  out["restarted_workloads"] = crash.got.workloads;
  out["restarted_pods"] = crash.got.pods;
  out["counts_match"] = crash.got.same_model(want);
  out["poll_ms"] = o.poll.count();
  out["machine"] = {{"nproc", std::thread::hardware_concurrency()},
                    {"loadavg_before", load_before},
                    {"loadavg_after", loadavg()}};
  (void)d.child->stop(SIGTERM, seconds(60));
  if (o.server) cleanup_streams(*pub, cfg);
  if (!problems.empty()) {
    out["problems"] = problems;
    out["dir"] = s.dir;
  } else {
    std::error_code ec;
    std::filesystem::remove_all(s.dir, ec);
  }
  std::cerr << "restart: snapshot " << out["snapshot_bytes"] << " bytes, written in "
            << out["snapshot_write_ms"] << " ms (mean); ready after SIGKILL " << out["ready_s"]
            << " s, after SIGTERM " << out.value("ready_s_clean", json(nullptr)) << " s\n";
  std::cout << out.dump() << "\n";
  return problems.empty() ? 0 : 1;
}

}  // namespace gpuaas::bench
