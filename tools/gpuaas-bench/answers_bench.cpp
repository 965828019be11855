#include "answers_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "bench_env.hpp"
#include "bench_server.hpp"
#include "soak_probes.hpp"

namespace gpuaas::bench {
namespace {

using nlohmann::json;
using Out = nlohmann::ordered_json;  // the result line, keys in the order they are told
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

double since_ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
double round1(double x) { return std::round(x * 10) / 10; }

struct Run {
  int exit_code = -1;
  std::string out;
  double ms = 0;
};

// A shell command, its stdout read as it comes (stderr to a file), timed from start to exit.
Run run(const std::string& cmd) {
  Run r;
  const auto t0 = Clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.ms = since_ms(t0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// What the pages of one paged answer (one JSON object per line) hold.
struct PageCount {
  int64_t pages = 0, items = 0, unique = 0, largest = 0;
  std::map<std::string, int64_t> states;  // explain: items per state
};

PageCount count_pages(const std::string& out, const char* id) {
  PageCount c;
  std::set<std::string> seen;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    ++c.pages;
    c.largest = std::max<int64_t>(c.largest, static_cast<int64_t>(line.size()));
    const json p = json::parse(line, nullptr, false);
    if (!p.is_object() || !p.contains("items") || !p["items"].is_array()) continue;
    for (const auto& x : p["items"]) {
      ++c.items;
      if (x.contains(id) && x[id].is_string()) seen.insert(x[id].get<std::string>());
      if (x.contains("state") && x["state"].is_string()) ++c.states[x["state"].get<std::string>()];
    }
  }
  c.unique = static_cast<int64_t>(seen.size());
  return c;
}

int64_t number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::stoll(m[1]) : -1;
}

int64_t vm_field(pid_t pid, const char* field) {  // kB in /proc/PID/status, as bytes
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  const std::string key = std::string(field) + ":";
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + key.size()) * 1024;
  return -1;
}

double metric(int port, const std::string& name) {
  int64_t lines = 0;
  auto sums = metric_sums(http_get(port, "/metrics"), &lines);
  auto it = sums.find(name);
  return it == sums.end() ? -1 : it->second;
}

std::string summary_json(const std::string& ctl) {
  return run(ctl + " state --summary --json 2>/dev/null").out;
}

// The commands timed, in the order a user might ask them.
struct Probe {
  std::string key;
  std::string args;
  int exit_code = 0;  // what a correct answer exits with; -1: 0 or 1
};

std::vector<Probe> probes(const AnswersScene& s) {
  const int k = std::max(0, std::min({7, s.namespaces - 1, s.workloads - 1}));
  const std::string ns = "team-" + std::to_string(k);
  return {{"state_summary", "state"},
          // The whole state when it fits one reply; else refused (exit 1), saying its size.
          {"state_whole", "state --json", -1},
          {"state_nodes", "state --nodes --json"},
          {"state_workloads", "state --workloads --json"},
          {"state_workloads_ns", "state --workloads -n " + ns},
          {"explain_one", "explain " + ns + "/job-" + std::to_string(k)},
          {"explain_all", "explain --json"},
          {"explain_ns", "explain -n " + ns},
          {"report", "report"},
          {"report_json", "report --json"}};
}

// What one answer held, from the first repeat: counts, pages, the largest page.
void record(const Probe& p, const Run& r, const AnswersScene& s, const std::string& ctl, Out& out,
            std::vector<std::string>& problems) {
  auto expect = [&](const std::string& what, int64_t got, int64_t want) {
    out[what] = got;
    if (got != want)
      problems.push_back(p.key + ": " + what + " " + std::to_string(got) + ", expected " +
                         std::to_string(want));
  };
  auto largest = [&](int64_t bytes) {
    out["largest_page_bytes"] = std::max(out.value("largest_page_bytes", int64_t{0}), bytes);
  };
  if (p.key == "state_summary") {
    // The text is the summary only when the whole state does not fit: counted from the
    // summary's JSON, which is the same whatever the size.
    const json j = json::parse(summary_json(ctl), nullptr, false);
    auto get = [&](const char* section, const char* field) {
      const json v = j.is_object() ? j.value(section, json::object()).value(field, json()) : json();
      return v.is_number_integer() ? v.get<int64_t>() : int64_t{-1};
    };
    expect("nodes", get("nodes", "total"), s.nodes);
    expect("gpus", get("gpus", "capacity"), int64_t{s.nodes} * kAnswersGpusPerNode);
    expect("workloads", get("workloads", "total"), s.workloads);
    out["state_text_is_summary"] = r.out.find("this is its summary") != std::string::npos;
  } else if (p.key == "state_whole") {
    out["state_whole_refused"] = r.exit_code == 1;
    out["state_whole_bytes"] =
        r.exit_code == 1 ? number_after(r.out, R"(answer is (\d+) bytes)") : int64_t(r.out.size());
  } else if (p.key == "state_nodes" || p.key == "state_workloads") {
    const bool nodes = p.key == "state_nodes";
    const PageCount c = count_pages(r.out, nodes ? "name" : "key");
    out[p.key + "_pages"] = c.pages;
    expect(p.key + "_items", c.unique, nodes ? s.nodes : s.workloads);
    largest(c.largest);
  } else if (p.key == "explain_all") {
    const PageCount c = count_pages(r.out, "key");
    out["explain_all_pages"] = c.pages;
    expect("explain_all_items", c.unique, s.workloads);
    expect("admitted", c.states.count("Admitted") ? c.states.at("Admitted") : 0,
           answers_admitted(s));
    expect("pending", c.states.count("Pending") ? c.states.at("Pending") : 0, answers_pending(s));
    largest(c.largest);
  } else if (p.key == "report_json") {
    const json j = json::parse(r.out, nullptr, false);
    const int64_t n = j.is_object() && j.contains("tenants") && j["tenants"].is_array()
                          ? static_cast<int64_t>(j["tenants"].size())
                          : -1;
    expect("report_tenants", n, answers_tenant_rows(s));
    out["report_json_bytes"] = r.out.size();
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Each command `repeats` times, round-robin so that the daemon's state is alike for each.
void measure(const AnswersOptions& o, const std::string& ctl, Out& out,
             std::vector<std::string>& problems) {
  const auto list = probes(o.scene);
  std::map<std::string, std::vector<double>> times;
  for (int rep = 0; rep < o.repeats; ++rep) {
    for (const auto& p : list) {
      const Run r = run(ctl + " " + p.args + " 2>/dev/null");
      times[p.key].push_back(r.ms);
      if (p.exit_code >= 0 ? r.exit_code != p.exit_code : r.exit_code != 0 && r.exit_code != 1)
        problems.push_back(p.key + ": exit " + std::to_string(r.exit_code));
      if (rep == 0) record(p, r, o.scene, ctl, out, problems);
      std::cerr << "answers: " << p.args << ": " << round1(r.ms) << " ms, " << r.out.size()
                << " bytes\n";
    }
  }
  for (const auto& p : list) out[p.key + "_ms"] = round1(median(times[p.key]));
}

// Applies the scene with gpuaasctl, as a user would, and waits (bounded) until every object is
// in the model and every Job decided: admitted up to its tenant's quota, the rest pending.
bool apply_and_settle(const AnswersOptions& o, const std::string& ctl, const std::string& dir,
                      int admin_port, Child& daemon, Out& out) {
  const AnswersScene& s = o.scene;
  const auto t0 = Clock::now();
  for (const auto& [name, text] : {std::pair{"nodes", answers_nodes_yaml(s)},
                                   {"jobs", answers_jobs_yaml(s)},
                                   {"pods", answers_pods_yaml(s)}}) {
    const std::string file = dir + "/" + name + ".yaml";
    std::ofstream(file) << text;
    const auto t = Clock::now();
    const Run r = run(ctl + " apply -f " + file + " >/dev/null");
    out[std::string("apply_") + name + "_s"] = round1(since_ms(t) / 1000);
    if (r.exit_code != 0) {
      std::cerr << "gpuaas-bench answers: gpuaasctl apply -f " << file << " exited " << r.exit_code
                << "\n";
      return false;
    }
  }
  out["apply_s"] = round1(since_ms(t0) / 1000);
  const std::string objects = std::to_string(s.nodes) + "," + std::to_string(s.workloads) + "," +
                              std::to_string(answers_pods(s));
  for (auto end = t0 + o.settle; Clock::now() < end && daemon.alive();) {
    std::this_thread::sleep_for(seconds(1));
    if (metric(admin_port, "gpuaas_admitted_workloads_total") !=
            static_cast<double>(answers_admitted(s)) ||
        metric(admin_port, "gpuaas_pending_workloads") != static_cast<double>(answers_pending(s)))
      continue;
    const json j =
        json::parse(run(ctl + " state --summary --json 2>/dev/null").out, nullptr, false);
    if (!j.is_object()) continue;
    auto total = [&](const char* k) {
      return j.value(k, json::object()).value("total", json()).dump();
    };
    const std::string seen = total("nodes") + "," + total("workloads") + "," + total("pods");
    if (seen != objects) continue;
    out["settled_s"] = round1(since_ms(t0) / 1000);
    return true;
  }
  return false;
}

}  // namespace

int run_answers_bench(const AnswersOptions& o) {
  std::unique_ptr<bus::NatsServerProcess> server;
  const std::string url = bench_server_url(std::nullopt, server, "gpuaas-bench answers");
  if (url.empty()) return 3;
  std::string dir = (std::filesystem::temp_directory_path() / "gpuaas-answers-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 3;
  const std::string bin = self_dir();
  const std::string gpuaasd = o.gpuaasd.empty() ? bin + "/gpuaasd" : o.gpuaasd;
  const std::string ctl =
      (o.gpuaasctl.empty() ? bin + "/gpuaasctl" : o.gpuaasctl) + " --server " + url;
  const std::string plugins = o.plugins.empty() ? bin + "/../plugins" : o.plugins;
  std::ofstream(dir + "/policy.yaml") << answers_policy_yaml(o.scene);
  // Ticks move event time, so the report's GPU-hours grow as they would in a live cluster.
  std::ofstream(dir + "/gpuaasd.yaml") << "tickInterval: 1s\npolicyWatchInterval: 0s\n";
  const int admin_port = bus::NatsServerProcess::free_port();
  Child daemon({gpuaasd, "--config", dir + "/gpuaasd.yaml", "--server", url, "--admin",
                "127.0.0.1:" + std::to_string(admin_port), "--policy", dir + "/policy.yaml",
                "--plugins", plugins},
               dir + "/gpuaasd.log");
  // The counts first, as a reader looks for them; measure() fills them in.
  Out out = {{"bench", "answers"}, {"nodes", nullptr}, {"gpus", nullptr}, {"workloads", nullptr}};
  bool up = false;
  for (auto end = Clock::now() + seconds(30); !up && Clock::now() < end && daemon.alive();) {
    up = run(ctl + " state --summary --json >/dev/null 2>&1").exit_code == 0;
    if (!up) std::this_thread::sleep_for(milliseconds(200));
  }
  if (!up || !apply_and_settle(o, ctl, dir, admin_port, daemon, out)) {
    out["error"] = up ? "the scene did not settle" : "gpuaasd did not answer";
    out["gpuaasd_log"] = dir + "/gpuaasd.log";
    std::cout << out.dump() << "\n";
    return 3;
  }
  std::cerr << "answers: scene settled in " << out["settled_s"] << " s (log " << dir
            << "/gpuaasd.log)\n";
  std::vector<std::string> problems;
  measure(o, ctl, out, problems);
  out["gpuaasd_rss_mb"] = round1(static_cast<double>(vm_field(daemon.pid(), "VmRSS")) / (1 << 20));
  out["gpuaasd_peak_rss_mb"] =
      round1(static_cast<double>(vm_field(daemon.pid(), "VmHWM")) / (1 << 20));
  out["repeats"] = o.repeats;
  out["tenants"] = o.scene.tenants;
  out["namespaces"] = o.scene.namespaces;
  out["machine"] = {{"nproc", std::thread::hardware_concurrency()}, {"loadavg", loadavg()}};
  const int daemon_exit = daemon.stop(SIGTERM, seconds(20));
  if (daemon_exit != 0) problems.push_back("gpuaasd exited " + std::to_string(daemon_exit));
  if (!problems.empty()) {
    out["problems"] = problems;
    out["gpuaasd_log"] = dir + "/gpuaasd.log";
  } else {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::cout << out.dump() << "\n";
  return problems.empty() ? 0 : 1;
}

}  // namespace gpuaas::bench
