#include "gpuaas/telemetry/registry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpuaas::telemetry {
namespace {

const MetricFamily* FindFamily(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

TEST(RegistryTest, SameLabelsReturnSameObject) {
  Registry registry;
  auto& family = BuildCounter().Name("jobs_total").Help("Jobs.").Register(registry);
  Counter& a = family.Add({{"result", "ok"}});
  Counter& b = family.Add({{"result", "ok"}});
  Counter& c = family.Add({{"result", "failed"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  EXPECT_TRUE(family.Has({{"result", "ok"}}));
  EXPECT_FALSE(family.Has({{"result", "other"}}));
}

TEST(RegistryTest, SameNameAndTypeReturnsSameFamily) {
  Registry registry;
  auto& first = BuildGauge().Name("queue_depth").Help("Depth.").Register(registry);
  auto& second = BuildGauge().Name("queue_depth").Help("Other help.").Register(registry);
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(registry.Collect().size(), 1u);
}

TEST(RegistryTest, TypeConflictThrows) {
  Registry registry;
  BuildCounter().Name("things").Register(registry);
  EXPECT_THROW(BuildGauge().Name("things").Register(registry), std::invalid_argument);
  EXPECT_THROW(BuildHistogram().Name("things").Register(registry), std::invalid_argument);
}

TEST(RegistryTest, ConstantLabelConflictThrows) {
  Registry registry;
  BuildCounter().Name("things_total").Labels({{"a", "1"}}).Register(registry);
  EXPECT_THROW(BuildCounter().Name("things_total").Labels({{"a", "2"}}).Register(registry),
               std::invalid_argument);
}

TEST(RegistryTest, InvalidNamesThrow) {
  Registry registry;
  for (const char* name : {"", "1abc", "has-dash", "has space", "__reserved", "é"}) {
    EXPECT_THROW(BuildCounter().Name(name).Register(registry), std::invalid_argument) << name;
  }
  EXPECT_NO_THROW(BuildCounter().Name("ok:name_1").Register(registry));
  EXPECT_NO_THROW(BuildCounter().Name("_leading").Register(registry));

  for (const char* label : {"", "1a", "a:b", "a-b", "__x"}) {
    EXPECT_THROW(BuildGauge().Name("g").Labels({{label, "v"}}).Register(registry),
                 std::invalid_argument)
        << label;
  }
  auto& family = BuildGauge().Name("g").Labels({{"zone", "a"}}).Register(registry);
  EXPECT_THROW(family.Add({{"a:b", "v"}}), std::invalid_argument);
  EXPECT_THROW(family.Add({{"__name__", "v"}}), std::invalid_argument);
  // Repeating a constant label would give a series two values for one label.
  EXPECT_THROW(family.Add({{"zone", "b"}}), std::invalid_argument);
  EXPECT_FALSE(family.Has({{"zone", "b"}}));

  auto& histograms = BuildHistogram().Name("h").Register(registry);
  EXPECT_THROW(histograms.Add({{"le", "1"}}, Histogram::BucketBoundaries{1}),
               std::invalid_argument);
  EXPECT_THROW(BuildHistogram().Name("h2").Labels({{"le", "1"}}).Register(registry),
               std::invalid_argument);
}

TEST(RegistryTest, RemovingManySeriesKeepsTheOthers) {
  Registry registry;
  auto& family = BuildCounter().Name("many_total").Help("h").Register(registry);
  std::vector<Counter*> series;
  for (int i = 0; i < 2000; ++i) series.push_back(&family.Add({{"i", std::to_string(i)}}));
  for (int i = 0; i < 2000; i += 2) family.Remove(series[i]);
  family.Remove(series[0]);  // again: ignored
  const MetricFamily f = family.Collect();
  ASSERT_EQ(f.samples.size(), 1000u);
  for (const auto& s : f.samples) EXPECT_EQ(std::stoi(s.labels.at("i")) % 2, 1);
  // A series added again after its removal is a new one, removable in turn.
  auto& again = family.Add({{"i", "0"}});
  family.Remove(&again);
  EXPECT_FALSE(family.Has({{"i", "0"}}));
}

TEST(RegistryTest, RemoveSeriesAndFamily) {
  Registry registry;
  auto& family = BuildCounter().Name("x_total").Register(registry);
  Counter& series = family.Add({{"k", "v"}});
  family.Remove(&series);
  EXPECT_FALSE(family.Has({{"k", "v"}}));
  EXPECT_EQ(family.Add({{"k", "v"}}).Value(), 0.0);  // a fresh series
  EXPECT_TRUE(registry.Remove(family));
  EXPECT_TRUE(registry.Collect().empty());
}

TEST(CounterTest, IgnoresNegativeAndNaNIncrements) {
  Counter counter;
  counter.Increment();
  counter.Increment(2.5);
  counter.Increment(-10);
  counter.Increment(std::numeric_limits<double>::quiet_NaN());
  EXPECT_DOUBLE_EQ(counter.Value(), 3.5);
}

TEST(GaugeTest, SetIncrementDecrement) {
  Gauge gauge;
  gauge.Set(10);
  gauge.Increment();
  gauge.Increment(4.5);
  gauge.Decrement();
  gauge.Decrement(20);
  EXPECT_DOUBLE_EQ(gauge.Value(), -5.5);
  gauge.Set(1);
  EXPECT_DOUBLE_EQ(gauge.Value(), 1);
}

TEST(HistogramTest, BucketsSumAndCount) {
  Histogram histogram({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 3.0, 100.0}) histogram.Observe(v);
  // Bounds are inclusive: 1.0 lands in le="1".
  EXPECT_EQ(histogram.CumulativeCounts(), (std::vector<std::uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(histogram.Count(), 5u);
  EXPECT_DOUBLE_EQ(histogram.Sum(), 106.0);

  const Sample sample = histogram.Collect();
  ASSERT_EQ(sample.buckets.size(), 4u);
  EXPECT_EQ(sample.buckets[0].upper_bound, 1.0);
  EXPECT_TRUE(std::isinf(sample.buckets[3].upper_bound));
  EXPECT_EQ(sample.buckets[3].cumulative_count, 5u);
  EXPECT_EQ(sample.sample_count, 5u);
  EXPECT_DOUBLE_EQ(sample.sample_sum, 106.0);
}

TEST(HistogramTest, RejectsBadBoundaries) {
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({1, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  // A trailing +Inf is implicit anyway.
  Histogram with_inf({1, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(with_inf.Boundaries(), (Histogram::BucketBoundaries{1}));
  Histogram empty({});
  empty.Observe(3);
  EXPECT_EQ(empty.CumulativeCounts(), (std::vector<std::uint64_t>{1}));
}

TEST(HistogramTest, BucketHelpers) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4), (Histogram::BucketBoundaries{1, 2, 4, 8}));
  EXPECT_EQ(LinearBuckets(0.5, 1, 3), (Histogram::BucketBoundaries{0.5, 1.5, 2.5}));
  EXPECT_THROW(ExponentialBuckets(0, 2, 3), std::invalid_argument);
  EXPECT_THROW(ExponentialBuckets(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(LinearBuckets(0, 0, 3), std::invalid_argument);
  EXPECT_THROW(LinearBuckets(0, 1, 0), std::invalid_argument);
}

TEST(RegistryTest, HistogramFamilyKeepsFirstBoundaries) {
  Registry registry;
  auto& family = BuildHistogram().Name("latency_seconds").Register(registry);
  Histogram& a = family.Add({}, Histogram::BucketBoundaries{1, 2});
  Histogram& b = family.Add({}, Histogram::BucketBoundaries{5});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(b.Boundaries(), (Histogram::BucketBoundaries{1, 2}));
}

TEST(RegistryTest, CollectMergesConstantAndSeriesLabels) {
  Registry registry;
  auto& family = BuildCounter()
                     .Name("req_total")
                     .Help("Requests.")
                     .Labels({{"pool", "a100"}})
                     .Register(registry);
  family.Add({{"code", "200"}}).Increment(3);
  BuildGauge().Name("empty").Register(registry);

  const auto families = registry.Collect();
  ASSERT_EQ(families.size(), 2u);
  const MetricFamily* req = FindFamily(families, "req_total");
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->help, "Requests.");
  EXPECT_EQ(req->type, MetricType::Counter);
  ASSERT_EQ(req->samples.size(), 1u);
  EXPECT_EQ(req->samples[0].labels, (Labels{{"code", "200"}, {"pool", "a100"}}));
  EXPECT_EQ(req->samples[0].value, 3);
  const MetricFamily* empty = FindFamily(families, "empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->samples.empty());
}

TEST(RegistryTest, ConcurrentIncrementsAreExact) {
  auto registry = std::make_shared<Registry>();
  auto& family = BuildCounter().Name("hits_total").Register(*registry);
  auto& gauges = BuildGauge().Name("level").Register(*registry);
  auto& histograms = BuildHistogram().Name("sizes").Register(*registry);
  constexpr int kPerThread = 10000;
  auto work = [&] {
    for (int i = 0; i < kPerThread; ++i) {
      // Add from both threads too, so the family's map is exercised concurrently.
      family.Add({{"k", "v"}}).Increment();
      gauges.Add({}).Increment();
      histograms.Add({}, Histogram::BucketBoundaries{0.5}).Observe(1);
      if (i % 1000 == 0) registry->Collect();
    }
  };
  std::thread t1(work);
  std::thread t2(work);
  t1.join();
  t2.join();
  EXPECT_EQ(family.Add({{"k", "v"}}).Value(), 2.0 * kPerThread);
  EXPECT_EQ(gauges.Add({}).Value(), 2.0 * kPerThread);
  EXPECT_EQ(histograms.Add({}, Histogram::BucketBoundaries{}).Count(), 2u * kPerThread);
  EXPECT_EQ(histograms.Add({}, Histogram::BucketBoundaries{}).Sum(), 2.0 * kPerThread);
}

}  // namespace
}  // namespace gpuaas::telemetry
