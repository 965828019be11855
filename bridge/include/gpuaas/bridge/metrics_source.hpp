// Metric samples for gpuaasd, gathered each `metrics.interval`: Prometheus targets scraped
// directly (dcgm-exporter, KServe/Knative queue-proxy; the text exposition format) and/or instant
// queries to a Prometheus server (vector results). Samples are grouped by namespace, one
// MetricBatch each, because gpuaasd accepts a sample on gpuaas.v1.metrics.<ns> only when it names
// that namespace (or none); samples naming no namespace go to "_cluster".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/v1/event.pb.h"

namespace gpuaas::bridge {

struct ScrapeTarget {
  std::string url;  // e.g. "http://dcgm-exporter.gpu-operator:9400/metrics"
};

struct PrometheusQuery {
  std::string url;                   // the server, e.g. "http://prometheus:9090"; "" = none
  std::vector<std::string> queries;  // PromQL, each sent to GET /api/v1/query
};

struct MetricsSourceOptions {
  std::vector<ScrapeTarget> targets;
  PrometheusQuery prometheus;
  std::chrono::seconds timeout{10};  // per HTTP request, connection included
};

struct NamespaceBatch {
  std::string namespace_;  // "_cluster" for samples that name no namespace
  gpuaas::v1::MetricBatch batch;
};

class MetricsSource {
 public:
  explicit MetricsSource(MetricsSourceOptions o);

  // One round over every target and query: the batches (sorted by namespace), and an error
  // string per failed target or query (a failed one loses nothing else; lines of a scrape that
  // do not parse are reported in one string, the others are kept). now_ms stamps samples that
  // carry no timestamp.
  struct Round {
    std::vector<NamespaceBatch> batches;
    std::vector<std::string> errors;
    std::size_t samples = 0;
  };
  Round collect(int64_t now_ms);

  // A body larger than this is cut off and its target reported failed (a bound on memory).
  static constexpr std::size_t kMaxBody = 64 * 1024 * 1024;

 private:
  MetricsSourceOptions options_;
};

// Prometheus scraping dcgm-exporter with honor_labels: false keeps the exporter's own
// namespace/pod/container in the plain labels and moves the GPU user's to exported_*. The
// exported_ values name the workload, so they replace the plain ones (and the exported_ labels go).
void relabel_exported(gpuaas::v1::MetricSample& s);

// The samples of a text exposition body, relabelled; lines without a timestamp get now_ms. Parse
// errors of single lines are appended to `errors` as "line L:C: message".
std::vector<gpuaas::v1::MetricSample> samples_from_text(std::string_view body, int64_t now_ms,
                                                        std::vector<std::string>* errors);

// The samples of a /api/v1/query answer (resultType "vector"; each result's own timestamp),
// relabelled. Results without a valid metric name (`__name__`, absent after most PromQL
// functions) are skipped and reported. A failed query ("status": "error", other result types,
// bad JSON) gives no samples and an error.
std::vector<gpuaas::v1::MetricSample> samples_from_query(std::string_view body,
                                                         std::vector<std::string>* errors);

// Groups samples into one batch per namespace (by the "namespace" label after relabelling).
std::vector<NamespaceBatch> group_by_namespace(std::vector<gpuaas::v1::MetricSample> samples);

}  // namespace gpuaas::bridge
