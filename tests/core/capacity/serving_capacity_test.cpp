// Serving outcomes and capacity in gpuaasd, as event sequences (the real plugins on the
// in-process bus, event time only). A Ray cluster stands for a service: the ServiceObjective's
// selector picks it (core knows no kind), its worker exports vLLM's series.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reclaim_harness.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::Harness;

const std::string kPrice =
    "apiVersion: gpuaas.io/v1alpha1\nkind: CostModel\nmetadata: {name: prices}\n"
    "spec:\n  currency: EUR\n  flavors:\n  - {name: l40s, pricePerGPUHour: 3}\n---\n";

const std::string kObjective =
    "apiVersion: gpuaas.io/v1alpha1\nkind: ServiceObjective\nmetadata: {name: chat}\n"
    "spec:\n  selector: {kinds: [RayCluster]}\n  latency: {ttftP95: 100ms}\n"
    "  quality: {threshold: 0.9}\n  capacity: {window: 30s, minRequests: 20}\n---\n";

using Labels = std::vector<std::pair<std::string, std::string>>;
using Samples = std::vector<std::pair<Labels, double>>;

// One scrape of the worker's vLLM series, cumulative: requests by finish reason and the TTFT
// histogram (le 0.1 and 0.25 s, +Inf).
void scrape(Harness& h, double stop, double length, double abort, double ttft_100ms,
            double ttft_250ms) {
  const std::string pod = "rc-gpu-worker-x1";
  const Labels base = {{"namespace", "team-a"}, {"pod", pod}, {"model_name", "m"}};
  auto with = [&](const char* k, const char* v) {
    Labels l = base;
    l.emplace_back(k, v);
    return l;
  };
  const double all = stop + length + abort;
  h.samples("team-a",
            {{with("finished_reason", "stop"), stop},
             {with("finished_reason", "length"), length},
             {with("finished_reason", "abort"), abort}},
            "vllm:request_success_total");
  h.samples("team-a",
            {{with("le", "0.1"), ttft_100ms},
             {with("le", "0.25"), ttft_250ms},
             {with("le", "+Inf"), all}},
            "vllm:time_to_first_token_seconds_bucket");
}

const json* service(const json& report, const std::string& name) {
  for (const auto& s : report["services"])
    if (s["service"] == name) return &s;
  return nullptr;
}

TEST(ServingCapacityTest, OutcomesCountLatencyAndQuality) {
  Harness h(test::cluster_policy() + kPrice + kObjective);
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  scrape(h, 0, 0, 0, 0, 0);  // the first reading: the increase starts here
  h.now = t0 + 30s;
  // 100 requests: 10 aborted (errors), 90 answered with a good finish reason; 70 had their
  // first token within 100 ms. Within the objective: min(90, 70) = 70, times the quality share
  // 90 / 100: 63.
  scrape(h, 80, 10, 10, 70, 95);
  h.run_until(t0 + 1h, std::nullopt);
  const json r = h.report();
  const json* s = service(r, "rc");
  ASSERT_NE(s, nullptr) << r.dump(2);
  EXPECT_DOUBLE_EQ((*s)["outcomes"].get<double>(), 63);
  EXPECT_EQ((*s)["tenant"], "serving");
  // The service's two GPUs at 3 EUR an hour, from its first answers (t0+30s) to t0+1h: 5.95 EUR.
  EXPECT_NEAR((*s)["cost"].get<double>(), 5.95, 1e-4);
  EXPECT_NEAR((*s)["cost_per_outcome"].get<double>(), 5.95 / 63, 1e-4);
  // The tenant's inference outcomes are the same requests.
  for (const auto& t : r["tenants"]) {
    if (t["tenant"] == "serving") {
      EXPECT_DOUBLE_EQ(t["outcomes"]["inference_requests"].get<double>(), 63) << t.dump();
    }
  }
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_service_requests_within_objective_total{namespace=\"team-a\","
                            "service=\"rc\"}"),
                   63);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_service_requests_total{namespace=\"team-a\",service=\"rc\"}"),
                   100);
  EXPECT_NEAR(h.metric("gpuaas_service_cost_per_outcome{namespace=\"team-a\",service=\"rc\"}"),
              5.95 / 63, 1e-6);
  // The same scrape again (a redelivery) adds nothing; a reset counter counts from zero.
  scrape(h, 80, 10, 10, 70, 95);
  h.now += 30s;
  scrape(h, 10, 0, 0, 10, 10);  // the replica restarted: 10 good, fast requests
  EXPECT_DOUBLE_EQ(service(h.report(), "rc")->at("outcomes").get<double>(), 73);
}

TEST(ServingCapacityTest, TheKneeOfLatencyAgainstRateIsTheSustainableRate) {
  Harness h(test::cluster_policy() + kObjective);
  const auto t0 = h.now;
  h.running_ray_cluster("team-a", "rc", 2);
  double stop = 0, fast = 0, mid = 0;
  scrape(h, 0, 0, 0, 0, 0);
  // 30-s windows: up to 4 requests/s every first token within 100 ms; from 6 requests/s on,
  // a fifth of them later (the p95 past the objective).
  const std::vector<double> rates = {1, 2, 3, 4, 6, 8, 2, 3, 4, 7, 9, 1, 4, 6};
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const double n = rates[i] * 30;
    stop += n;
    const double slow = rates[i] > 5 ? n / 5 : 0;
    fast += n - slow;
    mid += n;
    h.now = t0 + 30s * static_cast<int>(i + 1);
    scrape(h, stop, 0, 0, fast, mid);
  }
  const json x = h.explain("team-a/rc");
  ASSERT_TRUE(x.contains("serving")) << x.dump(2);
  const json& c = x["serving"]["capacity"];
  EXPECT_EQ(c["bound"], "bracketed") << x.dump(2);
  EXPECT_DOUBLE_EQ(c["sustainable_rps_per_replica"].get<double>(), 4);
  EXPECT_EQ(c["windows"], 14);
  EXPECT_EQ(c["windows_missing"], 5);
  EXPECT_GT(c["confidence"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_service_sustainable_rps{bound=\"bracketed\",namespace="
                            "\"team-a\",service=\"rc\"}"),
                   4);
}

TEST(ServingCapacityTest, OpenCostPricesFillFlavorsWithoutOne) {
  // No CostModel price: OpenCost's node_gpu_hourly_cost, as OpenCost 1.108+ writes it (per GPU).
  Harness h(test::cluster_policy());
  const auto t0 = h.now;
  const Labels node = {{"node", "gpu-0"}, {"instance", "gpu-0"}, {"instance_type", "g6.48xlarge"}};
  h.samples("_cluster", {{node, 2.5}}, "node_gpu_hourly_cost");
  h.samples("_cluster", {{node, 8}}, "node_gpu_count");
  h.samples("_cluster", {{node, 30}}, "node_total_hourly_cost");
  h.run_until(t0 + 10min, std::nullopt);
  json f = h.report()["cluster"]["flavors"][0];
  EXPECT_EQ(f["price_source"], "OpenCost") << f.dump();
  EXPECT_DOUBLE_EQ(f["gpu_hour_price"].get<double>(), 2.5);
  // An older OpenCost wrote the node's whole GPU cost (20 for 8 GPUs on a 24-an-hour node).
  h.samples("_cluster", {{node, 20}}, "node_gpu_hourly_cost");
  h.samples("_cluster", {{node, 24}}, "node_total_hourly_cost");
  h.run_until(t0 + 20min, std::nullopt);
  f = h.report()["cluster"]["flavors"][0];
  EXPECT_DOUBLE_EQ(f["gpu_hour_price"].get<double>(), 2.5) << f.dump();
  // Zeros are reported, not used.
  h.samples("_cluster", {{node, 0}}, "node_gpu_hourly_cost");
  h.samples("_cluster", {{node, 0}}, "node_total_hourly_cost");
  h.run_until(t0 + 30min, std::nullopt);
  const json r = h.report();
  EXPECT_EQ(r["cluster"]["flavors"][0]["price_source"], "none") << r.dump();
  ASSERT_EQ(r["cluster"]["price_notes"].size(), 2u) << r.dump();
  EXPECT_EQ(r["cluster"]["price_notes"][0]["refused"], "node_gpu_hourly_cost is 0");
  EXPECT_DOUBLE_EQ(h.metric("gpuaas_opencost_prices_refused{reason=\"zero\"}"), 2);
}

TEST(ServingCapacityTest, ACostModelPriceWinsOverOpenCost) {
  Harness h(test::cluster_policy() + kPrice);
  const auto t0 = h.now;
  h.samples("_cluster", {{{{"node", "gpu-0"}}, 9.0}}, "node_gpu_hourly_cost");
  h.run_until(t0 + 10min, std::nullopt);
  const json f = h.report()["cluster"]["flavors"][0];
  EXPECT_EQ(f["price_source"], "CostModel");
  EXPECT_DOUBLE_EQ(f["gpu_hour_price"].get<double>(), 3);
}

}  // namespace
}  // namespace gpuaas::core
