// The write budget on a fake monotonic clock (no test here sleeps for it): client-go's token
// bucket (burst, then qps), waiters in arrival order, stop, every write through KubeClient taking
// a token and no read doing so, the metrics, and the configuration keys.
#include "gpuaas/bridge/write_budget.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "fake_api_server.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/bridge/bridge_metrics.hpp"
#include "gpuaas/bridge/kube_client.hpp"

namespace gpuaas::bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

class FakeClock final : public MonotonicClock {
 public:
  nanoseconds now() const override { return now_; }
  void sleep_for(nanoseconds d) override {
    now_ += d;
    slept_ += d;
  }
  void advance(nanoseconds d) { now_ += d; }
  nanoseconds slept() const { return slept_; }

 private:
  nanoseconds now_{seconds(1000)};
  nanoseconds slept_{0};
};

TEST(WriteBudget, BurstThenQps) {
  FakeClock clock;
  WriteBudget b({20, 40}, clock);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(b.reserve(), nanoseconds(0)) << i;
  // Empty: each next write waits 1/qps more than the one before it (reserved in order).
  EXPECT_EQ(b.reserve(), milliseconds(50));
  EXPECT_EQ(b.reserve(), milliseconds(100));
  EXPECT_DOUBLE_EQ(b.tokens(), -2);
  clock.advance(seconds(1));
  EXPECT_DOUBLE_EQ(b.tokens(), 18);
  // A long quiet time fills the bucket up to the burst, no more.
  clock.advance(seconds(3600));
  EXPECT_DOUBLE_EQ(b.tokens(), 40);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(b.reserve(), nanoseconds(0));
  EXPECT_EQ(b.reserve(), milliseconds(50));
}

TEST(WriteBudget, SustainedRateIsQps) {
  FakeClock clock;
  WriteBudget b({5, 1}, clock);
  const std::atomic<bool> stop{false};
  const auto start = clock.now();
  nanoseconds waited{0};
  for (int i = 0; i < 11; ++i) waited += b.acquire(stop);
  // One at once, then ten more at 5 per second.
  EXPECT_EQ(clock.now() - start, seconds(2));
  EXPECT_EQ(waited, seconds(2));
  EXPECT_EQ(clock.slept(), seconds(2));
}

TEST(WriteBudget, AcquireWaitsOnTheClockAndStopEndsTheWait) {
  FakeClock clock;
  WriteBudget b({2, 1}, clock);
  const std::atomic<bool> running{false};
  EXPECT_EQ(b.acquire(running), nanoseconds(0));
  EXPECT_EQ(b.acquire(running), milliseconds(500));
  EXPECT_EQ(clock.slept(), milliseconds(500));
  const std::atomic<bool> stopped{true};
  EXPECT_EQ(b.acquire(stopped), nanoseconds(0));  // owed 500 ms, but the bridge is stopping
  EXPECT_EQ(clock.slept(), milliseconds(500));
}

TEST(WriteBudget, NonsenseOptionsAreRaisedToTheSmallestUsable) {
  FakeClock clock;
  WriteBudget b({0, 0}, clock);
  EXPECT_GT(b.options().qps, 0);
  EXPECT_EQ(b.options().burst, 1);
  EXPECT_EQ(b.reserve(), nanoseconds(0));
}

TEST(WriteBudget, RealClockIsMonotonic) {
  const auto a = steady_monotonic_clock().now();
  EXPECT_GE(steady_monotonic_clock().now(), a);
}

// Every write KubeClient sends takes a token; reads and watches never wait.
TEST(WriteBudget, KubeClientWritesTakeTokensAndReadsDoNot) {
  auto api = FakeApiServer::start();
  api->add_resource("v1", "Node", "nodes", false);
  api->add_resource("v1", "Event", "events", true);
  api->put({{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-1"}}}});
  KubeAuth auth;
  auth.server = api->url();
  KubeClient kube(auth);
  EXPECT_EQ(kube.write_budget().qps, 20);  // client-go's defaults, here too
  EXPECT_EQ(kube.write_budget().burst, 40);
  FakeClock clock;
  kube.set_write_budget({1, 2}, clock);
  std::vector<std::pair<std::string, double>> writes;
  kube.on_write([&](const std::string& verb, double waited) { writes.emplace_back(verb, waited); });

  for (int i = 0; i < 5; ++i) ASSERT_TRUE(kube.request("GET", "/api/v1/nodes/gpu-1").ok());
  EXPECT_TRUE(writes.empty());
  const std::string patch = R"({"metadata":{"labels":{"a":"b"}}})";
  for (int i = 0; i < 3; ++i) {
    auto r = kube.request("PATCH", "/api/v1/nodes/gpu-1", patch, "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.status << r.body;
  }
  auto created = kube.request(
      "POST", "/api/v1/namespaces/default/events",
      R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e","namespace":"default"}})");
  ASSERT_TRUE(created.ok()) << created.status << created.body;
  ASSERT_TRUE(kube.request("DELETE", "/api/v1/nodes/gpu-1").ok());
  ASSERT_EQ(writes.size(), 5u);
  EXPECT_EQ(writes[0], (std::pair<std::string, double>{"PATCH", 0}));
  EXPECT_EQ(writes[1], (std::pair<std::string, double>{"PATCH", 0}));
  EXPECT_EQ(writes[2], (std::pair<std::string, double>{"PATCH", 1}));
  EXPECT_EQ(writes[3], (std::pair<std::string, double>{"POST", 1}));
  EXPECT_EQ(writes[4], (std::pair<std::string, double>{"DELETE", 1}));
  EXPECT_EQ(clock.slept(), seconds(3));

  // A stopped client gives up its wait and sends nothing.
  std::size_t sent = api->requests().size();
  kube.stop();
  auto r = kube.request("PATCH", "/api/v1/nodes/gpu-1", patch, "application/merge-patch+json");
  EXPECT_EQ(r.error, "client stopped");
  EXPECT_EQ(api->requests().size(), sent);
}

double sample(const telemetry::Registry& r, const std::string& family,
              const telemetry::Labels& labels) {
  for (const auto& f : r.Collect()) {
    if (f.name != family) continue;
    for (const auto& s : f.samples)
      if (s.labels == labels) return s.value;
  }
  return -1;
}

TEST(WriteBudget, MetricsCountWritesByVerbAndTheTimeWaited) {
  telemetry::Registry registry;
  BridgeMetrics m(registry);
  EXPECT_EQ(sample(registry, "gpuaas_bridge_api_write_wait_seconds_total", {}), 0);
  m.api_write("PATCH", 0);
  m.api_write("PATCH", 0.25);
  m.api_write("POST", 0.5);
  EXPECT_EQ(sample(registry, "gpuaas_bridge_api_writes_total", {{"verb", "PATCH"}}), 2);
  EXPECT_EQ(sample(registry, "gpuaas_bridge_api_writes_total", {{"verb", "POST"}}), 1);
  EXPECT_DOUBLE_EQ(sample(registry, "gpuaas_bridge_api_write_wait_seconds_total", {}), 0.75);
}

TEST(WriteBudget, ConfigurationKeys) {
  BridgeConfig cfg = default_bridge_config();
  EXPECT_EQ(cfg.kubernetes.qps, 20);
  EXPECT_EQ(cfg.kubernetes.burst, 40);
  ASSERT_TRUE(parse_bridge_config("kubernetes: {qps: 7.5, burst: 12}\n", "bridge.yaml", cfg));
  EXPECT_EQ(cfg.kubernetes.qps, 7.5);
  EXPECT_EQ(cfg.kubernetes.burst, 12);
  auto error = [](const std::string& text) {
    BridgeConfig c = default_bridge_config();
    return parse_bridge_config(text, "bridge.yaml", c).message();
  };
  EXPECT_EQ(error("kubernetes: {qps: 0}\n"),
            "bridge.yaml:1:19: kubernetes.qps: \"0\" is not a number > 0");
  EXPECT_NE(error("kubernetes: {qps: fast}\n").find("is not a number > 0"), std::string::npos);
  EXPECT_NE(error("kubernetes: {qps: [1]}\n").find("is not a number > 0"), std::string::npos);
  EXPECT_NE(error("kubernetes: {burst: 0}\n").find("is not an integer >= 1"), std::string::npos);
}

}  // namespace
}  // namespace gpuaas::bridge
