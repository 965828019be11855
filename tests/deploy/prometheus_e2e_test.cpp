// The observability files of deploy/ against the real thing: gpuaasd with its admin server on,
// a real Prometheus scraping it (with deploy/prometheus/alerts.yml loaded), and the Grafana
// dashboard's and the alerts' metric names checked against the families the daemon registers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon_e2e.hpp"
#include "gpuaas/bus/nats_server_process.hpp"

namespace gpuaas::testing {
namespace {

std::string source_dir() { return GPUAAS_SOURCE_DIR; }
std::string prometheus_bin() { return GPUAAS_PROMETHEUS; }
std::string promtool_bin() { return GPUAAS_PROMTOOL; }
std::string python3_bin() { return GPUAAS_PYTHON3; }

// A suspended batch/v1 Job of 2 pods with one GPU each, queued in team-a's LocalQueue.
constexpr const char* kJob = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  resourceVersion: "1"
  labels: {kueue.x-k8s.io/queue-name: main}
spec:
  suspend: true
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: example/train:1
        resources:
          limits: {nvidia.com/gpu: "1", cpu: "4", memory: 16Gi}
)";

// HTTP GET with curl (bounded); the body, or "" on any failure.
std::string http_get(const std::string& url) {
  auto r = run_command("curl -sf --max-time 5 '" + url + "' 2>/dev/null");
  return r.exit_code == 0 ? r.out : std::string();
}

class PrometheusEndToEnd : public DaemonEndToEnd {
 protected:
  PrometheusEndToEnd() : DaemonEndToEnd("prom") {}

  // As DaemonEndToEnd::start_daemon, with the admin server (GET /metrics) on a free port.
  void start_daemon_with_admin(const std::string& policy_text) {
    admin_ = "127.0.0.1:" + std::to_string(bus::NatsServerProcess::free_port());
    policy_ = write("policy.yaml", policy_text);
    daemon_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                                 "--admin", admin_, "--policy", policy_, "--plugins",
                                 bin_dir() + "/../plugins"},
        dir_ + "/gpuaasd.log");
    ASSERT_TRUE(eventually([&] { return ctl("state --json 2>/dev/null").exit_code == 0; }))
        << log();
    ASSERT_TRUE(eventually([&] { return !http_get("http://" + admin_ + "/metrics").empty(); }))
        << log();
  }

  // Prometheus scraping the daemon every second, with the project's alert rules loaded.
  void start_prometheus() {
    ASSERT_FALSE(prometheus_bin().empty()) << "prometheus not found when cmake ran: install it "
                                              "(Debian: apt-get install prometheus)";
    prom_ = "127.0.0.1:" + std::to_string(bus::NatsServerProcess::free_port());
    const std::string config = write("prometheus.yml",
                                     "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                                     "rule_files: ['" +
                                         source_dir() + "/deploy/prometheus/alerts.yml']\n" +
                                         "scrape_configs:\n- job_name: gpuaasd\n  static_configs:\n"
                                         "  - targets: ['" +
                                         admin_ + "']\n");
    std::filesystem::create_directories(dir_ + "/tsdb");
    prometheus_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{prometheus_bin(), "--config.file=" + config,
                                 "--storage.tsdb.path=" + dir_ + "/tsdb",
                                 "--web.listen-address=" + prom_},
        dir_ + "/prometheus.log");
    ASSERT_TRUE(
        eventually([&] { return !http_get("http://" + prom_ + "/-/ready").empty(); }, seconds(30)))
        << prometheus_->log();
  }

  // The single value of an instant query, or null when there is none (yet).
  json query(const std::string& promql) {
    auto r = run_command("curl -sf --max-time 5 -G 'http://" + prom_ +
                         "/api/v1/query' --data-urlencode 'query=" + promql + "' 2>/dev/null");
    auto j = json::parse(r.out, nullptr, false);
    if (!j.is_object() || j["status"] != "success") return nullptr;
    const json result = j["data"]["result"];
    if (!result.is_array() || result.size() != 1) return nullptr;
    return result[0]["value"][1];  // [time, "value"]
  }
  static double number(const json& v) {
    return v.is_string() ? std::stod(v.get<std::string>()) : -1;
  }

  std::string admin_, prom_;
  std::unique_ptr<ChildProcess> prometheus_;
};

TEST_F(PrometheusEndToEnd, ScrapedGpuUsageMatchesGpuaasctlState) {
  start_daemon_with_admin(kH100QueuePolicy);
  ASSERT_FALSE(HasFatalFailure());
  start_prometheus();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(apply("node.yaml", kH100Node), 0);
  ASSERT_EQ(apply("job.yaml", kJob), 0);

  // The Job is admitted: its 2 GPUs show in gpuaasctl's usage, then in what Prometheus scraped.
  std::string gpus;
  json scraped;
  const std::string usage_query =
      R"(gpuaas_cluster_queue_resource_usage{cluster_queue="batch",resource="nvidia.com/gpu"})";
  ASSERT_TRUE(eventually(
      [&] {
        gpus = usage("batch", "nvidia.com/gpu");
        if (gpus.empty() || gpus == "0") return false;
        scraped = query(usage_query);
        return !scraped.is_null() && number(scraped) == std::stod(gpus);
      },
      seconds(30)))
      << "gpuaasctl state usage '" << gpus << "', Prometheus " << scraped.dump() << "\n"
      << log() << prometheus_->log();
  EXPECT_EQ(gpus, "2");

  // The scrape itself is healthy and the daemon counted the events it processed.
  const json up = query(R"(up{job="gpuaasd"})");
  EXPECT_EQ(number(up), 1) << up.dump();
  json processed;
  EXPECT_TRUE(eventually(
      [&] {
        processed = query("sum(gpuaas_events_processed_total)");
        return number(processed) > 0;
      },
      seconds(10)))
      << processed.dump();

  // Prometheus loaded alerts.yml and evaluates every rule without error on the real series.
  json groups;
  EXPECT_TRUE(eventually(
      [&] {
        auto j = json::parse(http_get("http://" + prom_ + "/api/v1/rules"), nullptr, false);
        if (!j.is_object()) return false;
        groups = j["data"]["groups"];
        int evaluated = 0;
        for (const auto& g : groups)
          for (const auto& r : g["rules"]) {
            if (r.value("health", "") != "ok") return false;
            ++evaluated;
          }
        return evaluated >= 6;
      },
      seconds(20)))
      << groups.dump(2);
  EXPECT_EQ(prometheus_->stop(), 0) << prometheus_->log();
}

TEST_F(PrometheusEndToEnd, DashboardAndAlertsNameOnlyFamiliesTheDaemonRegisters) {
  ASSERT_FALSE(python3_bin().empty()) << "python3 not found when cmake ran";
  ASSERT_FALSE(promtool_bin().empty()) << "promtool not found when cmake ran: install it "
                                          "(Debian: apt-get install prometheus)";
  start_daemon_with_admin(kH100QueuePolicy);
  ASSERT_FALSE(HasFatalFailure());
  const std::string families = "http://" + admin_ + "/metrics/families";
  const auto listed = json::parse(http_get(families), nullptr, false);
  ASSERT_TRUE(listed.is_array() && !listed.empty()) << families << ": " << listed.dump();

  auto r = run_command(python3_bin() + " " + source_dir() + "/tests/deploy/check_dashboard.py" +
                       " --dashboard " + source_dir() + "/deploy/grafana/gpuaas-dashboard.json" +
                       " --alerts " + source_dir() + "/deploy/prometheus/alerts.yml" +
                       " --promtool " + promtool_bin() + " --families " + families + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace gpuaas::testing

namespace gpuaas::testing {
namespace {

// A pod of the admitted Job, running on the node and seen by dcgm-exporter: the GPU families
// have series too.
constexpr const char* kRunningPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: train-abcde
  namespace: team-a
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: job-train, controller: true}]
spec:
  nodeName: h100-a
  containers:
  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
status: {phase: Running}
)";

constexpr const char* kDcgm =
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"h100-a\",namespace=\"team-a\",pod=\"train-abcde\"} "
    "55\n";

TEST_F(PrometheusEndToEnd, MetricsPassPromtoolAndShowTheIssuesFamilies) {
  start_daemon_with_admin(kH100QueuePolicy);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(promtool_bin().empty()) << "promtool not found when cmake ran";
  ASSERT_EQ(apply("node.yaml", kH100Node), 0);
  ASSERT_EQ(apply("job.yaml", kJob), 0);
  ASSERT_EQ(apply("pod.yaml", kRunningPod), 0);
  ASSERT_EQ(ctl("push-metrics " + write("dcgm.prom", kDcgm) + " >/dev/null").exit_code, 0);
  // A node, a workload, an admission and a running pod seen: every family the issue names shows.
  const std::vector<std::string> families = {"gpuaas_pending_workloads",
                                             "gpuaas_pending_gpus",
                                             "gpuaas_admitted_workloads_total",
                                             "gpuaas_evicted_workloads_total",
                                             "gpuaas_preempted_workloads_total",
                                             "gpuaas_admission_wait_time_seconds",
                                             "gpuaas_cluster_queue_nominal_quota",
                                             "gpuaas_cluster_queue_borrowing_limit",
                                             "gpuaas_cluster_queue_lending_limit",
                                             "gpuaas_cluster_queue_resource_reservation",
                                             "gpuaas_cluster_queue_resource_usage",
                                             "gpuaas_cluster_queue_weighted_share",
                                             "gpuaas_gpu_allocated_seconds_total",
                                             "gpuaas_gpu_busy_seconds_total",
                                             "gpuaas_gpu_idle_reserved_seconds_total",
                                             "gpuaas_decisions_total",
                                             "gpuaas_events_processed_total",
                                             "gpuaas_events_deadlettered_total",
                                             "gpuaas_event_to_action_latency_seconds",
                                             "gpuaas_plugin_errors_total",
                                             "gpuaas_cost_total",
                                             "gpuaas_outcomes_total"};
  std::string text, missing;
  EXPECT_TRUE(eventually(
      [&] {
        text = http_get("http://" + admin_ + "/metrics");
        missing.clear();
        for (const auto& f : families)
          if (text.find("# TYPE " + f + " ") == std::string::npos) missing += f + " ";
        return missing.empty();
      },
      seconds(20)))
      << "missing: " << missing << "\n"
      << log();
  const auto check = run_command("cat " + write("metrics.txt", text) + " | " + promtool_bin() +
                                 " check metrics 2>&1");
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

}  // namespace
}  // namespace gpuaas::testing
