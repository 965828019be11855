// MetricsSource against real HTTP: dcgm-exporter's documented sample served by an in-test
// civetweb server and scraped; a target that refuses connections; and a real Prometheus that
// scrapes the in-test target (as a cluster's Prometheus scrapes dcgm-exporter, honor_labels
// false) and is then asked through /api/v1/query.
#include "gpuaas/bridge/metrics_source.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "gpuaas/bus/nats_server_process.hpp"
#include "gpuaas/telemetry/admin_server.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::bridge {
namespace {

using telemetry::HttpResponse;

constexpr int64_t kNow = 1'780'000'000'000;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// dcgm-exporter as its README shows it (the "..." lines are the README's elisions).
std::string readme_sample() {
  return read_file(gpuaas::testing::shared_dir() +
                   "/manifests/dcgm-exporter/README.md.lines68-78.metrics-sample.txt");
}

// dcgm-exporter's labels for GPUs that pods hold, as a Prometheus with honor_labels: false
// re-exposes them (federation, or a second exporter in the chain): the exporter's own namespace
// and pod in the plain labels, the workload's in exported_*.
constexpr const char* kExported =
    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"gpu-node-1\",namespace=\"gpu-operator\","
    "pod=\"dcgm-exporter-x1\",container=\"exporter\",exported_namespace=\"team-a\","
    "exported_pod=\"train-0\",exported_container=\"main\"} 87\n"
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"gpu-node-1\",exported_namespace=\"team-b\","
    "exported_pod=\"serve-0\"} 12 1779999990000\n"
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",Hostname=\"gpu-node-1\",namespace=\"gpu-operator\","
    "exported_namespace=\"\",exported_pod=\"\"} 0\n";

// dcgm-exporter's own exposition (what Prometheus scrapes): the pod's labels plain.
constexpr const char* kDirect =
    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"gpu-node-1\",UUID=\"GPU-1\",namespace=\"team-a\","
    "pod=\"train-0\",container=\"main\"} 87\n"
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"gpu-node-1\",UUID=\"GPU-2\",namespace=\"team-b\","
    "pod=\"serve-0\",container=\"server\"} 12\n";

std::map<std::string, std::string> labels_of(const v1::MetricSample& s) {
  std::map<std::string, std::string> m;
  for (const auto& l : s.labels()) m[l.name()] = l.value();
  return m;
}

const NamespaceBatch* batch_of(const MetricsSource::Round& r, const std::string& ns) {
  for (const auto& b : r.batches)
    if (b.namespace_ == ns) return &b;
  return nullptr;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + "\n";
  return s;
}

// An in-test exporter: GET paths answered with fixed bodies.
class Exporter {
 public:
  Exporter() {
    auto s = telemetry::AdminServer::Start("127.0.0.1:0", std::make_shared<telemetry::Registry>());
    if (!s.is_ok()) throw std::runtime_error(s.status().message());
    server_ = std::move(s).value();
  }
  void serve(const std::string& path, std::string body, int status = 200) {
    server_->Handle(path, [body = std::move(body), status](std::string_view) {
      HttpResponse r;
      r.status = status;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = body;
      return r;
    });
  }
  std::string address() const { return server_->address(); }
  std::string url(const std::string& path) const { return "http://" + address() + path; }

 private:
  std::unique_ptr<telemetry::AdminServer> server_;
};

TEST(RelabelExported, ExportedValuesReplaceTheExportersOwn) {
  v1::MetricSample s;
  s.set_name("DCGM_FI_DEV_GPU_UTIL");
  auto add = [&](const char* n, const char* v) {
    auto* l = s.add_labels();
    l->set_name(n);
    l->set_value(v);
  };
  add("gpu", "0");
  add("namespace", "gpu-operator");
  add("exported_namespace", "team-a");
  add("exported_pod", "train-0");
  add("pod", "dcgm-exporter-x1");
  add("exported_container", "main");
  relabel_exported(s);
  EXPECT_EQ(labels_of(s),
            (std::map<std::string, std::string>{
                {"gpu", "0"}, {"namespace", "team-a"}, {"pod", "train-0"}, {"container", "main"}}));
  ASSERT_EQ(s.labels_size(), 4);
  EXPECT_EQ(s.labels(1).name(), "namespace");  // in place of the exporter's own
}

TEST(RelabelExported, EmptyExportedLabelNamesNobody) {
  v1::MetricSample s;
  s.set_name("m");
  auto* a = s.add_labels();
  a->set_name("namespace");
  a->set_value("team-a");
  auto* b = s.add_labels();
  b->set_name("exported_namespace");
  b->set_value("");
  relabel_exported(s);
  EXPECT_EQ(labels_of(s), (std::map<std::string, std::string>{{"namespace", "team-a"}}));
}

TEST(SamplesFromQuery, VectorResultsKeepTheirTimestamps) {
  std::vector<std::string> errors;
  auto samples = samples_from_query(
      R"({"status":"success","data":{"resultType":"vector","result":[
          {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","namespace":"gpu-operator",
                     "exported_namespace":"team-a","exported_pod":"train-0"},
           "value":[1780000000.123,"87"]},
          {"metric":{"__name__":"up","job":"x"},"value":[1780000001,"NaN"]},
          {"metric":{"gpu":"0"},"value":[1780000000,"5"]}]}})",
      &errors);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].name(), "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(samples[0].value(), 87);
  EXPECT_EQ(samples[0].timestamp_ms(), 1780000000123);
  EXPECT_EQ(labels_of(samples[0]), (std::map<std::string, std::string>{
                                       {"gpu", "0"}, {"namespace", "team-a"}, {"pod", "train-0"}}));
  EXPECT_TRUE(std::isnan(samples[1].value()));
  ASSERT_EQ(errors.size(), 1u);  // the result without __name__
  EXPECT_NE(errors[0].find("__name__"), std::string::npos) << errors[0];
}

TEST(SamplesFromQuery, FailuresGiveAnErrorAndNoSamples) {
  for (const char* body :
       {R"({"status":"error","errorType":"bad_data","error":"parse error"})",
        R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
        R"({"status":"success","data":{"resultType":"scalar","result":[1,"1"]}})", "not json"}) {
    std::vector<std::string> errors;
    EXPECT_TRUE(samples_from_query(body, &errors).empty()) << body;
    EXPECT_EQ(errors.size(), 1u) << body;
  }
}

TEST(MetricsSource, ScrapesDcgmExportersReadmeSample) {
  Exporter exporter;
  exporter.serve("/metrics", readme_sample());
  MetricsSource source({{{exporter.url("/metrics")}}, {}, std::chrono::seconds(5)});
  auto round = source.collect(kNow);

  // The README's three samples name no pod: the GPUs are idle, cluster scope.
  EXPECT_EQ(round.samples, 3u);
  ASSERT_EQ(round.batches.size(), 1u);
  EXPECT_EQ(round.batches[0].namespace_, "_cluster");
  const auto& samples = round.batches[0].batch.samples();
  ASSERT_EQ(samples.size(), 3);
  EXPECT_EQ(samples[0].name(), "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(samples[0].value(), 139);
  EXPECT_EQ(samples[0].timestamp_ms(), kNow);
  EXPECT_EQ(labels_of(samples[0]), (std::map<std::string, std::string>{
                                       {"gpu", "0"},
                                       {"UUID", "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"},
                                       {"container", ""},
                                       {"namespace", ""},
                                       {"pod", ""}}));
  EXPECT_EQ(samples[1].name(), "DCGM_FI_DEV_MEM_CLOCK");
  EXPECT_EQ(samples[2].name(), "DCGM_FI_DEV_MEMORY_TEMP");
  EXPECT_EQ(samples[2].value(), 9223372036854775794.0);
  // The README's "..." elision lines are reported in one error; the samples still arrive.
  ASSERT_EQ(round.errors.size(), 1u) << joined(round.errors);
  EXPECT_NE(round.errors[0].find("2 line(s) skipped"), std::string::npos) << round.errors[0];
}

TEST(MetricsSource, GroupsByTheWorkloadsNamespace) {
  Exporter exporter;
  exporter.serve("/exported", kExported);
  MetricsSource source({{{exporter.url("/exported")}}, {}, std::chrono::seconds(5)});
  auto round = source.collect(kNow);
  ASSERT_TRUE(round.errors.empty()) << joined(round.errors);
  EXPECT_EQ(round.samples, 3u);
  ASSERT_EQ(round.batches.size(), 3u);

  const NamespaceBatch* a = batch_of(round, "team-a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->batch.samples_size(), 1);
  EXPECT_EQ(labels_of(a->batch.samples(0)),
            (std::map<std::string, std::string>{{"gpu", "0"},
                                                {"Hostname", "gpu-node-1"},
                                                {"namespace", "team-a"},
                                                {"pod", "train-0"},
                                                {"container", "main"}}));
  EXPECT_EQ(a->batch.samples(0).timestamp_ms(), kNow);

  const NamespaceBatch* b = batch_of(round, "team-b");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->batch.samples_size(), 1);
  EXPECT_EQ(labels_of(b->batch.samples(0)).at("pod"), "serve-0");
  EXPECT_EQ(b->batch.samples(0).timestamp_ms(), 1779999990000);  // its own

  // Empty exported_ labels name nobody: the exporter's namespace stays (it is what was sent).
  const NamespaceBatch* op = batch_of(round, "gpu-operator");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(labels_of(op->batch.samples(0)),
            (std::map<std::string, std::string>{
                {"gpu", "2"}, {"Hostname", "gpu-node-1"}, {"namespace", "gpu-operator"}}));
}

TEST(MetricsSource, AFailedTargetLosesNothingElse) {
  Exporter exporter;
  exporter.serve("/direct", kDirect);
  exporter.serve("/broken", "oops", 500);
  const std::string refused =
      "http://127.0.0.1:" + std::to_string(bus::NatsServerProcess::free_port()) + "/metrics";
  MetricsSource source({{{refused}, {exporter.url("/broken")}, {exporter.url("/direct")}},
                        {},
                        std::chrono::seconds(5)});
  auto round = source.collect(kNow);
  ASSERT_EQ(round.errors.size(), 2u) << joined(round.errors);
  EXPECT_NE(round.errors[0].find(refused), std::string::npos) << round.errors[0];
  EXPECT_NE(round.errors[1].find("HTTP 500"), std::string::npos) << round.errors[1];
  EXPECT_EQ(round.samples, 2u);
  ASSERT_EQ(round.batches.size(), 2u);
  EXPECT_EQ(round.batches[0].namespace_, "team-a");
  EXPECT_EQ(round.batches[1].namespace_, "team-b");
}

TEST(MetricsSource, NamespacesThatAreNoSubjectTokenAreDropped) {
  Exporter exporter;
  exporter.serve("/m", "a{namespace=\"x.y\"} 1\nb{namespace=\"ok\"} 2\n");
  MetricsSource source({{{exporter.url("/m")}}, {}, std::chrono::seconds(5)});
  auto round = source.collect(kNow);
  EXPECT_EQ(round.samples, 1u);
  ASSERT_EQ(round.batches.size(), 1u);
  EXPECT_EQ(round.batches[0].namespace_, "ok");
  EXPECT_EQ(round.errors.size(), 1u) << joined(round.errors);
}

// Where prometheus is: PATH, as Debian's package installs it.
std::string prometheus_bin() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    const std::filesystem::path p = std::filesystem::path(d) / "prometheus";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

// A real Prometheus scrapes the in-test dcgm-exporter with the target labels a Kubernetes
// service discovery gives (the exporter's namespace and pod): the pods' labels become
// exported_*, and MetricsSource's queries bring them back as namespace/pod.
TEST(MetricsSource, QueriesARealPrometheus) {
  const std::string bin = prometheus_bin();
  ASSERT_FALSE(bin.empty()) << "prometheus not found on PATH (Debian: apt-get install prometheus)";
  Exporter exporter;
  exporter.serve("/metrics", kDirect);
  const std::string dir = gpuaas::testing::temp_dir("bridge-metrics-prom");
  const std::string listen = "127.0.0.1:" + std::to_string(bus::NatsServerProcess::free_port());
  {
    std::ofstream cfg(dir + "/prometheus.yml");
    cfg << "global: {scrape_interval: 1s}\n"
           "scrape_configs:\n"
           "- job_name: dcgm-exporter\n"
           "  honor_labels: false\n"
           "  static_configs:\n"
           "  - targets: ['"
        << exporter.address()
        << "']\n"
           "    labels: {namespace: gpu-operator, pod: dcgm-exporter-x1, container: exporter}\n";
  }
  std::filesystem::create_directories(dir + "/tsdb");
  auto prometheus = std::make_unique<gpuaas::testing::ChildProcess>(
      std::vector<std::string>{bin, "--config.file=" + dir + "/prometheus.yml",
                               "--storage.tsdb.path=" + dir + "/tsdb",
                               "--web.listen-address=" + listen},
      dir + "/prometheus.log");

  MetricsSource source(
      {{},
       {"http://" + listen + "/", {"DCGM_FI_DEV_GPU_UTIL", "sum(DCGM_FI_DEV_GPU_UTIL)", "rate(("}},
       std::chrono::seconds(5)});
  // Bounded: Prometheus starts, scrapes within a second or two of starting; 40 s at most.
  MetricsSource::Round round;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  while (std::chrono::steady_clock::now() < deadline) {
    round = source.collect(kNow);
    if (round.samples >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(round.samples, 2u) << joined(round.errors) << prometheus->log();

  const NamespaceBatch* a = batch_of(round, "team-a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->batch.samples_size(), 1);
  const auto& s = a->batch.samples(0);
  EXPECT_EQ(s.name(), "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(s.value(), 87);
  const auto labels = labels_of(s);
  EXPECT_EQ(labels.at("namespace"), "team-a");
  EXPECT_EQ(labels.at("pod"), "train-0");
  EXPECT_EQ(labels.at("container"), "main");
  EXPECT_EQ(labels.at("job"), "dcgm-exporter");
  EXPECT_EQ(labels.count("exported_namespace"), 0u);
  // The scrape's time, not the caller's: within the last minute of the wall clock.
  const int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  EXPECT_GT(s.timestamp_ms(), wall - 60'000);
  EXPECT_LE(s.timestamp_ms(), wall + 1'000);
  ASSERT_NE(batch_of(round, "team-b"), nullptr);

  // sum() has no metric name (reported, skipped); the bad PromQL is Prometheus' 400 answer.
  ASSERT_EQ(round.errors.size(), 2u) << joined(round.errors);
  EXPECT_NE(round.errors[0].find("__name__"), std::string::npos) << round.errors[0];
  EXPECT_NE(round.errors[1].find("HTTP 400: query failed: bad_data"), std::string::npos)
      << round.errors[1];

  prometheus.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuaas::bridge
