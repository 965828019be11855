#include "gpuaas/telemetry/text_serializer.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::telemetry {
namespace {

TEST(FormatValueTest, IntegersShortestAndSpecials) {
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(-42), "-42");
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(FormatValue(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(FormatValue(1e300), "1e+300");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(TextSerializerTest, ExactOutput) {
  Registry registry;
  // Registered out of order: output is sorted by family name, then by labels.
  auto& temps = BuildGauge()
                    .Name("temperature_celsius")
                    .Help("Temp with \\ backslash\nand newline, \"quotes\" kept.")
                    .Register(registry);
  temps.Add({{"path", "a\"b\\c\nd"}}).Set(-1.5);
  auto& requests = BuildCounter()
                       .Name("requests_total")
                       .Help("Requests served.")
                       .Labels({{"pool", "a100"}})
                       .Register(registry);
  requests.Add({{"method", "POST"}}).Increment(1.5);
  requests.Add({{"method", "GET"}}).Increment(3);
  auto& latency = BuildHistogram().Name("latency_seconds").Help("Latency.").Register(registry);
  Histogram& h = latency.Add({{"op", "bind"}}, Histogram::BucketBoundaries{0.5, 1});
  for (double v : {0.25, 0.5, 2.0}) h.Observe(v);
  BuildGauge().Name("unused").Help("Never has a series.").Register(registry);
  BuildCounter().Name("no_help_total").Register(registry).Add({}).Increment();

  const std::string expected =
      "# HELP latency_seconds Latency.\n"
      "# TYPE latency_seconds histogram\n"
      "latency_seconds_bucket{op=\"bind\",le=\"0.5\"} 2\n"
      "latency_seconds_bucket{op=\"bind\",le=\"1\"} 2\n"
      "latency_seconds_bucket{op=\"bind\",le=\"+Inf\"} 3\n"
      "latency_seconds_sum{op=\"bind\"} 2.75\n"
      "latency_seconds_count{op=\"bind\"} 3\n"
      "# TYPE no_help_total counter\n"
      "no_help_total 1\n"
      "# HELP requests_total Requests served.\n"
      "# TYPE requests_total counter\n"
      "requests_total{method=\"GET\",pool=\"a100\"} 3\n"
      "requests_total{method=\"POST\",pool=\"a100\"} 1.5\n"
      "# HELP temperature_celsius Temp with \\\\ backslash\\nand newline, \"quotes\" kept.\n"
      "# TYPE temperature_celsius gauge\n"
      "temperature_celsius{path=\"a\\\"b\\\\c\\nd\"} -1.5\n";
  EXPECT_EQ(TextSerializer().Serialize(registry.Collect()), expected);
}

TEST(TextSerializerTest, EmptyFamiliesAreOmitted) {
  Registry registry;
  auto& family = BuildCounter().Name("later_total").Help("Appears later.").Register(registry);
  EXPECT_EQ(TextSerializer().Serialize(registry.Collect()), "");
  family.Add({}).Increment();
  EXPECT_EQ(TextSerializer().Serialize(registry.Collect()),
            "# HELP later_total Appears later.\n# TYPE later_total counter\nlater_total 1\n");
}

TEST(TextSerializerTest, HandBuiltFamiliesSortAndSpecialValues) {
  MetricFamily b{"b", "", MetricType::Gauge, {}};
  b.samples.push_back(Sample{{{"x", "2"}}, std::numeric_limits<double>::quiet_NaN(), {}, 0, 0});
  b.samples.push_back(Sample{{{"x", "1"}}, -std::numeric_limits<double>::infinity(), {}, 0, 0});
  MetricFamily a{"a", "", MetricType::Gauge, {}};
  a.samples.push_back(Sample{{}, 1e-7, {}, 0, 0});
  EXPECT_EQ(TextSerializer().Serialize({b, a}),
            "# TYPE a gauge\na 1e-07\n# TYPE b gauge\nb{x=\"1\"} -Inf\nb{x=\"2\"} NaN\n");
}

bool PromtoolAvailable() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

TEST(TextSerializerTest, PromtoolAcceptsOutput) {
  if (!PromtoolAvailable()) GTEST_SKIP() << "promtool not on PATH";

  Registry registry;
  auto& requests = BuildCounter()
                       .Name("gpuaas_requests_total")
                       .Help("Requests handled by the controller.")
                       .Labels({{"component", "scheduler"}})
                       .Register(registry);
  requests.Add({{"result", "ok"}}).Increment(7);
  requests.Add({{"result", "tricky \"quoted\" \\ value\nwith newline"}}).Increment();
  BuildGauge()
      .Name("gpuaas_free_gpus")
      .Help("GPUs free, by pool.\nSecond line with a \\ backslash.")
      .Register(registry)
      .Add({{"pool", "a100"}})
      .Set(12);
  auto& latency = BuildHistogram()
                      .Name("gpuaas_bind_duration_seconds")
                      .Help("Time to bind a workload.")
                      .Register(registry);
  Histogram& h = latency.Add({}, ExponentialBuckets(0.001, 10, 4));
  for (double v : {0.0005, 0.02, 0.3, 7.0}) h.Observe(v);

  const std::string text = TextSerializer().Serialize(registry.Collect());
  char path[] = "/tmp/telemetry_promtool_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  const std::string command =
      std::string("promtool check metrics < ") + path + " > " + path + ".out 2>&1";
  const int rc = std::system(command.c_str());
  std::ifstream report(std::string(path) + ".out");
  const std::string promtool_output((std::istreambuf_iterator<char>(report)),
                                    std::istreambuf_iterator<char>());
  std::remove(path);
  std::remove((std::string(path) + ".out").c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << "promtool said:\n"
                                                     << promtool_output << "\ninput:\n"
                                                     << text;
}

}  // namespace
}  // namespace gpuaas::telemetry
