#include "gpuaas/core/metric_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/wire/prometheus_text.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

wire::EventTime at_s(int64_t seconds) { return wire::from_unix_ms(seconds * 1000); }

SeriesSample sample(std::string name, Labels labels, double value, wire::EventTime t) {
  return SeriesSample{std::move(name), std::move(labels), value, t};
}

// dcgm-exporter's labels for a GPU used by a pod (as in its README and the demo scrape).
Labels dcgm_labels(const std::string& node, const std::string& gpu, const std::string& ns,
                   const std::string& pod) {
  return {{"gpu", gpu},
          {"UUID", "GPU-" + node + "-" + gpu},
          {"device", "nvidia" + gpu},
          {"modelName", "NVIDIA H100 80GB HBM3"},
          {"Hostname", node},
          {"container", "main"},
          {"namespace", ns},
          {"pod", pod}};
}

std::vector<double> values(const std::vector<const SeriesSample*>& v) {
  std::vector<double> out;
  for (const auto* s : v) out.push_back(s->value);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MetricStoreTest, RecordAndLatest) {
  MetricStore store;
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "0", "team-a", "train-0"), 97,
                      at_s(100)));
  EXPECT_EQ(store.series_count(), 1u);
  auto v = store.for_pod("team-a", "train-0");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(v[0]->value, 97);
  EXPECT_EQ(v[0]->time, at_s(100));
  // Labels are kept sorted, so label() can search them.
  EXPECT_TRUE(std::is_sorted(v[0]->labels.begin(), v[0]->labels.end()));
  EXPECT_EQ(MetricStore::label(*v[0], "modelName"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(MetricStore::label(*v[0], "missing"), "");

  // A newer sample of the same series replaces the value; the series count stays.
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "0", "team-a", "train-0"), 12,
                      at_s(110)));
  EXPECT_EQ(store.series_count(), 1u);
  v = store.for_pod("team-a", "train-0");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->value, 12);
  EXPECT_EQ(v[0]->time, at_s(110));
}

TEST(MetricStoreTest, OlderSampleIsIgnoredSameTimeReplaces) {
  MetricStore store;
  auto labels = dcgm_labels("gpu-0", "0", "team-a", "train-0");
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", labels, 50, at_s(200)));
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", labels, 99, at_s(199)));
  auto v = store.for_gpu("gpu-0", "0");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]->value, 50);
  EXPECT_EQ(v[0]->time, at_s(200));
  // "Not older": a second sample at the same time wins (a re-scrape with a correction).
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", labels, 51, at_s(200)));
  EXPECT_EQ(store.for_gpu("gpu-0", "0")[0]->value, 51);
}

TEST(MetricStoreTest, LabelOrderDoesNotMakeANewSeries) {
  MetricStore store;
  store.record(sample("m", {{"pod", "p"}, {"namespace", "n"}, {"gpu", "1"}}, 1, at_s(1)));
  store.record(sample("m", {{"gpu", "1"}, {"namespace", "n"}, {"pod", "p"}}, 2, at_s(2)));
  EXPECT_EQ(store.series_count(), 1u);
  EXPECT_EQ(store.for_pod("n", "p")[0]->value, 2);
  // A different label value or name is a different series.
  store.record(sample("m", {{"gpu", "2"}, {"namespace", "n"}, {"pod", "p"}}, 3, at_s(2)));
  store.record(sample("m2", {{"gpu", "1"}, {"namespace", "n"}, {"pod", "p"}}, 4, at_s(2)));
  EXPECT_EQ(store.series_count(), 3u);
  EXPECT_EQ(values(store.for_pod("n", "p")), (std::vector<double>{2, 3, 4}));
}

TEST(MetricStoreTest, LabelBoundariesAreUnambiguous) {
  // Series keys join name, label names and values: distinct label sets stay distinct.
  MetricStore store;
  store.record(sample("m", {{"a", "b=c"}}, 1, at_s(1)));
  store.record(sample("m", {{"a", "b"}, {"c", ""}}, 2, at_s(1)));
  store.record(sample("ma", {}, 3, at_s(1)));
  store.record(sample("m", {{"a", ""}}, 4, at_s(1)));
  EXPECT_EQ(store.series_count(), 4u);
}

TEST(MetricStoreTest, ForPodByNamespaceAndPod) {
  MetricStore store;
  store.record(
      sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "0", "team-a", "train-0"), 97, at_s(1)));
  store.record(
      sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "1", "team-a", "train-0"), 95, at_s(1)));
  store.record(sample("DCGM_FI_DEV_FB_USED", dcgm_labels("gpu-0", "0", "team-a", "train-0"), 70000,
                      at_s(1)));
  store.record(
      sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-1", "0", "team-b", "nb-0"), 0, at_s(1)));
  EXPECT_EQ(values(store.for_pod("team-a", "train-0")), (std::vector<double>{95, 97, 70000}));
  EXPECT_EQ(values(store.for_pod("team-b", "nb-0")), (std::vector<double>{0}));
  EXPECT_TRUE(store.for_pod("team-a", "nb-0").empty());
  EXPECT_TRUE(store.for_pod("team-b", "train-0").empty());
  EXPECT_TRUE(store.for_pod("", "").empty());
}

TEST(MetricStoreTest, ExportedLabelsWinOverTheScrapeTargetsOwn) {
  // Scraped with honor_labels: false, namespace/pod describe the exporter's own pod and the
  // workload's are in exported_namespace/exported_pod.
  MetricStore store;
  store.record(sample("DCGM_FI_DEV_GPU_UTIL",
                      {{"Hostname", "gpu-0"},
                       {"gpu", "3"},
                       {"namespace", "gpu-operator"},
                       {"pod", "nvidia-dcgm-exporter-7xk2p"},
                       {"exported_namespace", "team-a"},
                       {"exported_pod", "train-0"}},
                      88, at_s(1)));
  ASSERT_EQ(store.for_pod("team-a", "train-0").size(), 1u);
  EXPECT_EQ(store.for_pod("team-a", "train-0")[0]->value, 88);
  EXPECT_TRUE(store.for_pod("gpu-operator", "nvidia-dcgm-exporter-7xk2p").empty());
  EXPECT_EQ(store.for_gpu("gpu-0", "3").size(), 1u);
}

TEST(MetricStoreTest, SamplesWithoutAPodOrGpuAreKeptButNotIndexed) {
  MetricStore store;
  // An idle GPU: dcgm-exporter prints empty namespace and pod.
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "5", "", ""), 0, at_s(1)));
  // Only one of namespace and pod.
  store.record(sample("m", {{"namespace", "team-a"}}, 1, at_s(1)));
  store.record(sample("m", {{"pod", "p"}}, 2, at_s(1)));
  // A GPU without its node, and a node without a GPU index.
  store.record(sample("m", {{"gpu", "0"}}, 3, at_s(1)));
  store.record(sample("m", {{"Hostname", "gpu-0"}}, 4, at_s(1)));
  EXPECT_EQ(store.series_count(), 5u);
  EXPECT_TRUE(store.for_pod("", "").empty());
  EXPECT_TRUE(store.for_pod("team-a", "").empty());
  EXPECT_EQ(store.gpu_keys(), (std::vector<std::string>{"gpu-0/5"}));
}

TEST(MetricStoreTest, ForGpuByHostnameOrNode) {
  MetricStore store;
  store.record(
      sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "0", "team-a", "a"), 10, at_s(1)));
  store.record(
      sample("DCGM_FI_DEV_GPU_TEMP", dcgm_labels("gpu-0", "0", "team-a", "a"), 60, at_s(1)));
  store.record(
      sample("DCGM_FI_DEV_GPU_UTIL", dcgm_labels("gpu-0", "1", "team-a", "b"), 20, at_s(1)));
  // Without Hostname, a "node" label (added by relabelling) names the node.
  store.record(sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"node", "gpu-9"}}, 30, at_s(1)));
  EXPECT_EQ(values(store.for_gpu("gpu-0", "0")), (std::vector<double>{10, 60}));
  EXPECT_EQ(values(store.for_gpu("gpu-0", "1")), (std::vector<double>{20}));
  EXPECT_EQ(values(store.for_gpu("gpu-9", "0")), (std::vector<double>{30}));
  EXPECT_TRUE(store.for_gpu("gpu-0", "2").empty());
  EXPECT_TRUE(store.for_gpu("gpu-1", "0").empty());
}

TEST(MetricStoreTest, GpuKeysAreSortedAndUnique) {
  MetricStore store;
  for (const char* node : {"n-b", "n-a"}) {
    for (const char* gpu : {"1", "0"}) {
      store.record(sample("u", {{"Hostname", node}, {"gpu", gpu}}, 1, at_s(1)));
      store.record(sample("t", {{"Hostname", node}, {"gpu", gpu}}, 1, at_s(1)));
    }
  }
  EXPECT_EQ(store.gpu_keys(), (std::vector<std::string>{"n-a/0", "n-a/1", "n-b/0", "n-b/1"}));
  EXPECT_TRUE(MetricStore().gpu_keys().empty());
}

TEST(MetricStoreTest, ExpireDropsOldSeriesAndTheirIndexEntries) {
  MetricStore store;
  store.record(sample("u", dcgm_labels("gpu-0", "0", "team-a", "old"), 1, at_s(100)));
  store.record(sample("u", dcgm_labels("gpu-0", "1", "team-a", "new"), 2, at_s(200)));
  store.record(sample("t", dcgm_labels("gpu-0", "1", "team-a", "new"), 3, at_s(150)));
  EXPECT_EQ(store.expire(at_s(100)), 0u);  // strictly older only
  EXPECT_EQ(store.series_count(), 3u);
  EXPECT_EQ(store.expire(at_s(160)), 2u);
  EXPECT_EQ(store.series_count(), 1u);
  EXPECT_TRUE(store.for_pod("team-a", "old").empty());
  EXPECT_TRUE(store.for_gpu("gpu-0", "0").empty());
  EXPECT_EQ(values(store.for_pod("team-a", "new")), (std::vector<double>{2}));
  EXPECT_EQ(store.gpu_keys(), (std::vector<std::string>{"gpu-0/1"}));
  // An expired series comes back as a new one when it reports again.
  store.record(sample("u", dcgm_labels("gpu-0", "0", "team-a", "old"), 5, at_s(90)));
  EXPECT_EQ(values(store.for_pod("team-a", "old")), (std::vector<double>{5}));
  EXPECT_EQ(store.expire(at_s(1000)), 2u);
  EXPECT_EQ(store.series_count(), 0u);
  EXPECT_TRUE(store.gpu_keys().empty());
}

// A deleted pod's series go with it (not after the retention), and only its own.
TEST(MetricStoreTest, DropPodTakesItsSeriesAndTheirIndexEntries) {
  MetricStore store;
  store.record(sample("u", dcgm_labels("gpu-0", "0", "team-a", "gone"), 1, at_s(100)));
  store.record(sample("t", dcgm_labels("gpu-0", "0", "team-a", "gone"), 2, at_s(100)));
  store.record(sample("u", dcgm_labels("gpu-0", "1", "team-a", "kept"), 3, at_s(100)));
  EXPECT_EQ(store.drop_pod("team-a", "gone"), 2u);
  EXPECT_EQ(store.drop_pod("team-a", "gone"), 0u);
  EXPECT_EQ(store.drop_pod("team-b", "kept"), 0u);
  EXPECT_EQ(store.series_count(), 1u);
  EXPECT_TRUE(store.for_pod("team-a", "gone").empty());
  EXPECT_TRUE(store.for_gpu("gpu-0", "0").empty());
  EXPECT_EQ(values(store.for_namespace("team-a")), (std::vector<double>{3}));
  EXPECT_EQ(store.gpu_keys(), (std::vector<std::string>{"gpu-0/1"}));
}

// Many series of one namespace expiring at once (a soak's churn): the index keeps the others in
// the order they came.
TEST(MetricStoreTest, ExpiringManySeriesKeepsTheRestInOrder) {
  MetricStore store;
  for (int i = 0; i < 2000; ++i)
    store.record(
        sample("u", dcgm_labels("gpu-" + std::to_string(i), "0", "team-a", "p" + std::to_string(i)),
               i, at_s(i % 2 == 0 ? 100 : 200)));
  EXPECT_EQ(store.expire(at_s(150)), 1000u);
  std::vector<double> expected;
  for (int i = 1; i < 2000; i += 2) expected.push_back(i);
  EXPECT_EQ(values(store.for_namespace("team-a")), expected);
  EXPECT_TRUE(store.for_pod("team-a", "p0").empty());
  EXPECT_EQ(values(store.for_pod("team-a", "p1")), (std::vector<double>{1}));
  EXPECT_EQ(store.gpu_keys().size(), 1000u);
}

TEST(MetricStoreTest, SamplesFromTheDcgmExporterReadme) {
  // The README's excerpt (with literal "..." lines that do not parse): a GPU no pod uses and
  // without a Hostname label, so it is kept but found by neither pod nor GPU.
  std::ifstream in(gpuaas::testing::shared_dir() +
                   "/manifests/dcgm-exporter/README.md.lines68-78.metrics-sample.txt");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  wire::ParsedText parsed = wire::parse_prometheus_text(text.str());
  ASSERT_EQ(parsed.samples.size(), 3u);
  MetricStore store;
  for (const auto& s : parsed.samples) {
    SeriesSample ss;
    ss.name = s.name;
    for (const auto& l : s.labels) ss.labels.emplace_back(l.name, l.value);
    ss.value = s.value;
    ss.time = at_s(1);
    store.record(std::move(ss));
  }
  EXPECT_EQ(store.series_count(), 3u);
  EXPECT_TRUE(store.gpu_keys().empty());
  EXPECT_TRUE(store.for_pod("", "").empty());
}

}  // namespace
}  // namespace gpuaas::core
