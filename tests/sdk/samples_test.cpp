// Reading metric samples (labels, series, counters) and writing activity answers.
#include "gpuaas/plugin/samples.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpuaas/plugin/testing.hpp"

namespace gpuaas::plugin {
namespace {

using testing::sample;

TEST(SampleLabels, MissingLabelsReadEmpty) {
  const v1::MetricSample bare = sample("m", {}, 1);
  EXPECT_EQ(Samples::label(bare, "pod"), "");
  EXPECT_EQ(Samples::pod(bare), "");
  EXPECT_EQ(Samples::namespace_(bare), "");

  const v1::MetricSample other = sample("m", {{"gpu", "0"}}, 1);
  EXPECT_EQ(Samples::label(other, "gpu"), "0");
  EXPECT_EQ(Samples::label(other, "GPU"), "");  // names are case-sensitive
  EXPECT_EQ(Samples::pod(other), "");
}

TEST(SampleLabels, ExportedPodAndNamespaceWin) {
  // As Prometheus stores a dcgm-exporter sample: the target's pod under pod, the GPU's under
  // exported_pod.
  const v1::MetricSample relabelled = sample("m",
                                             {{"pod", "dcgm-exporter-x"},
                                              {"namespace", "monitoring"},
                                              {"exported_pod", "train-0"},
                                              {"exported_namespace", "team-a"}},
                                             1);
  EXPECT_EQ(Samples::pod(relabelled), "train-0");
  EXPECT_EQ(Samples::namespace_(relabelled), "team-a");

  const v1::MetricSample plain = sample("m", {{"pod", "train-0"}, {"namespace", "team-a"}}, 1);
  EXPECT_EQ(Samples::pod(plain), "train-0");
  EXPECT_EQ(Samples::namespace_(plain), "team-a");

  // An empty exported_* label is as good as none.
  const v1::MetricSample empty = sample("m", {{"exported_pod", ""}, {"pod", "train-0"}}, 1);
  EXPECT_EQ(Samples::pod(empty), "train-0");
}

TEST(SampleSeries, SameSeriesWhateverTheLabelOrder) {
  const auto a = sample("requests_total", {{"pod", "p"}, {"code", "200"}}, 1, 1000);
  const auto b = sample("requests_total", {{"code", "200"}, {"pod", "p"}}, 7, 2000);
  EXPECT_EQ(Samples::series_key(a), Samples::series_key(b));
  EXPECT_NE(Samples::series_key(a),
            Samples::series_key(sample("requests_total", {{"pod", "p"}, {"code", "500"}}, 1)));
  EXPECT_NE(Samples::series_key(a),
            Samples::series_key(sample("requests_total", {{"pod", "p"}}, 1)));
  EXPECT_NE(Samples::series_key(a),
            Samples::series_key(sample("errors_total", {{"pod", "p"}, {"code", "200"}}, 1)));
  EXPECT_EQ(Samples::series_key(sample("up", {}, 1)), "up");
  // Run together, both would read "a=bcd=e".
  EXPECT_NE(Samples::series_key(sample("m", {{"a", "bc"}, {"d", "e"}}, 1)),
            Samples::series_key(sample("m", {{"a", "b"}, {"cd", "e"}}, 1)));
}

TEST(CounterRose, RiseOrRestartWithCounts) {
  EXPECT_TRUE(counter_rose(10, 12));
  EXPECT_FALSE(counter_rose(10, 10));
  EXPECT_FALSE(counter_rose(10, 0));  // reset, nothing counted since
  EXPECT_TRUE(counter_rose(10, 3));   // reset, then 3 counted
  EXPECT_FALSE(counter_rose(0, 0));
}

TEST(FormatNumber, SignificantDigits) {
  EXPECT_EQ(format_number(80), "80");
  EXPECT_EQ(format_number(12.5), "12.5");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(0.05), "0.05");
  EXPECT_EQ(format_number(1234567), "1.23457e+06");
  EXPECT_EQ(format_number(-3), "-3");
}

TEST(FormatNumber, DecimalKeepsEveryDigitOfLargeCounters) {
  EXPECT_EQ(format_number(80, NumberStyle::kDecimal), "80");
  EXPECT_EQ(format_number(12.5, NumberStyle::kDecimal), "12.5");
  EXPECT_EQ(format_number(0, NumberStyle::kDecimal), "0");
  EXPECT_EQ(format_number(1234567, NumberStyle::kDecimal), "1234567");
  EXPECT_EQ(format_number(0.1234567, NumberStyle::kDecimal), "0.123457");
}

TEST(FormatNumber, NonNumericValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(format_number(inf), "inf");
  EXPECT_EQ(format_number(-inf), "-inf");
  EXPECT_NE(format_number(std::nan("")).find("nan"), std::string::npos);
  EXPECT_EQ(format_number(inf, NumberStyle::kDecimal), "inf");
  EXPECT_NE(format_number(std::nan(""), NumberStyle::kDecimal).find("nan"), std::string::npos);
}

TEST(ActivityAnswers, LastActiveOnlyWhenKnown) {
  const auto busy = active("busy", 1'700'000'000'250);
  EXPECT_EQ(busy.level(), v1::WorkloadActivity::ACTIVE);
  EXPECT_EQ(busy.last_active().seconds(), 1'700'000'000);
  EXPECT_EQ(busy.last_active().nanos(), 250'000'000);
  EXPECT_FALSE(active("busy", 0).has_last_active());

  const auto seen = idle("quiet", 1'700'000'000'000);
  EXPECT_EQ(seen.level(), v1::WorkloadActivity::IDLE);
  EXPECT_EQ(seen.evidence(), "quiet");
  EXPECT_EQ(seen.last_active().seconds(), 1'700'000'000);
  EXPECT_FALSE(idle("quiet").has_last_active());
  EXPECT_FALSE(idle("quiet", -1).has_last_active());

  EXPECT_EQ(unknown_activity("nothing").level(), v1::WorkloadActivity::UNKNOWN);
}

}  // namespace
}  // namespace gpuaas::plugin
