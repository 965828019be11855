// The passive estimate on real series: the capacity tests' k-slot server (an M/M/k queue) under
// load steps around its Erlang C rate, scraped by a real Prometheus; the series recorded there,
// read back through Prometheus' HTTP API and published to gpuaasd as the bridge would, give a
// knee near the rate Erlang C says. Real time by nature (about a minute); it runs alone.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gpuaas/bus/nats_server_process.hpp"
#include "gpuaas/capacity/erlang_c.hpp"
#include "gpuaas/capacity/load_runner.hpp"
#include "process.hpp"
#include "reclaim_harness.hpp"
#include "support/slot_server.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr int kSlots = 8;
constexpr double kHold = 0.05;
constexpr double kObjective = 0.02;  // on a bucket boundary of vLLM's TTFT histogram

std::string prometheus_bin() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    const std::filesystem::path p = std::filesystem::path(d) / "prometheus";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

std::string http_get(const std::string& url) {
  CURL* c = curl_easy_init();
  std::string body;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(
      c, CURLOPT_WRITEFUNCTION, +[](char* d, std::size_t s, std::size_t n, void* u) {
        static_cast<std::string*>(u)->append(d, s * n);
        return s * n;
      });
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_perform(c);
  curl_easy_cleanup(c);
  return body;
}

std::string escape(const std::string& s) {
  char* e = curl_easy_escape(nullptr, s.c_str(), static_cast<int>(s.size()));
  std::string out(e);
  curl_free(e);
  return out;
}

TEST(ServingPassiveTest, TheKneeFromPrometheusSeriesIsNearErlangC) {
  const std::string bin = prometheus_bin();
  ASSERT_FALSE(bin.empty()) << "prometheus not found on PATH (Debian: apt-get install prometheus)";
  testing::SlotServer server({kSlots, kHold, 21, 400});
  const std::string dir = ::testing::TempDir() + "passive-prom-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/tsdb");
  const std::string listen = "127.0.0.1:" + std::to_string(bus::NatsServerProcess::free_port());
  {
    std::ofstream cfg(dir + "/prometheus.yml");
    cfg << "global: {scrape_interval: 1s}\nscrape_configs:\n- job_name: vllm\n"
           "  static_configs:\n  - targets: ['"
        << server.address() << "']\n    labels: {namespace: team-a, pod: rc-gpu-worker-x1}\n";
  }
  gpuaas::testing::ChildProcess prometheus(
      {bin, "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
       "--web.listen-address=" + listen},
      dir + "/prometheus.log");
  // Bounded: Prometheus scrapes within a few seconds of starting.
  const std::string up = "http://" + listen + "/api/v1/query?query=" + escape("up{job=\"vllm\"}");
  bool ready = false;
  for (int i = 0; i < 120 && !ready; ++i) {
    ready = http_get(up).find("\"1\"]") != std::string::npos;
    if (!ready) std::this_thread::sleep_for(250ms);
  }
  ASSERT_TRUE(ready) << "Prometheus never scraped the server";

  const double c = gpuaas::capacity::sustainable_rate(kSlots, 1 / kHold, kObjective, 0.05);
  gpuaas::capacity::LoadTarget t;
  t.base_url = server.url();
  t.model = "slot-model";
  t.request_timeout = 10;
  const auto mix = gpuaas::capacity::RequestMix::fixed(8, 4);
  const auto start = std::chrono::system_clock::now();
  uint64_t seed = 3;
  for (double f : {0.3, 0.5, 0.7, 0.85, 1.2, 1.45, 0.6, 1.3})
    gpuaas::capacity::run_load_step(t, mix, f * c, 8, 0, seed++, nullptr);
  std::this_thread::sleep_for(2500ms);  // the last scrapes
  const auto end = std::chrono::system_clock::now();
  auto secs = [](auto tp) { return std::chrono::duration<double>(tp.time_since_epoch()).count(); };
  const json r = json::parse(http_get("http://" + listen + "/api/v1/query_range?query=" +
                                      escape("{pod=\"rc-gpu-worker-x1\",__name__=~\"vllm:.*\"}") +
                                      "&start=" + std::to_string(secs(start)) +
                                      "&end=" + std::to_string(secs(end)) + "&step=1"),
                             nullptr, false);
  ASSERT_EQ(r.value("status", ""), "success") << r.dump();

  // Every series' value at each step time, by metric name: what the bridge would publish.
  std::map<double, std::map<std::string, test::Harness::Samples>> at;
  for (const auto& series : r["data"]["result"]) {
    std::string name;
    test::Harness::Labels labels;
    for (const auto& [k, v] : series["metric"].items()) {
      if (k == "__name__") {
        name = v.get<std::string>();
      } else {
        labels.emplace_back(k, v.get<std::string>());
      }
    }
    for (const auto& p : series["values"])
      at[p[0].get<double>()][name].push_back({labels, std::stod(p[1].get<std::string>())});
  }
  ASSERT_GT(at.size(), 30u);

  test::Harness h(test::cluster_policy() +
                  "apiVersion: gpuaas.io/v1alpha1\nkind: ServiceObjective\nmetadata: {name: chat}\n"
                  "spec:\n  selector: {kinds: [RayCluster]}\n  latency: {ttftP95: 20ms}\n"
                  "  capacity: {window: 4s, minRequests: 20}\n");
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 1);
  const double first = at.begin()->first;
  for (const auto& [time, metrics] : at) {
    h.now = t0 + std::chrono::milliseconds(static_cast<int64_t>((time - first) * 1000));
    for (const auto& [name, samples] : metrics) h.samples("team-a", samples, name);
  }
  const json x = h.explain("team-a/rc");
  ASSERT_TRUE(x.contains("serving")) << x.dump(2);
  const json& k = x["serving"]["capacity"];
  const double found = k["sustainable_rps_per_replica"].get<double>();
  std::fprintf(stderr, "Erlang C %.1f req/s; the knee %.1f (%.2f C), %s, confidence %.2f, %s\n", c,
               found, found / c, k["bound"].get<std::string>().c_str(),
               k["confidence"].get<double>(), k.dump().c_str());
  EXPECT_EQ(k["bound"], "bracketed");
  EXPECT_GE(found, 0.6 * c);
  EXPECT_LE(found, 1.15 * c);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuaas::core
