// Whether a Ray cluster is in use: GPU utilisation of its pods (dcgm-exporter, or Ray's own node
// metric), Ray tasks running, and Ray Serve requests in flight or served between two scrapes.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "ray.hpp"

namespace gpuaas::ray {
namespace {

using plugin::Samples;

enum class Reading { kIgnored, kPercent, kRatio, kTasks, kGauge, kCounter };

Reading reading_of(const std::string& name, const Config& c) {
  if (name == plugin::kGpuUtilMetric) return Reading::kPercent;
  if (name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE") return Reading::kRatio;
  if (!c.ray_metrics) return Reading::kIgnored;
  if (name == "ray_node_gpus_utilization") return Reading::kPercent;
  if (name == "ray_tasks") return Reading::kTasks;
  // Serve gauges: requests in the proxies and in the replicas right now.
  static const std::set<std::string> gauges = {
      "ray_serve_num_ongoing_http_requests", "ray_serve_num_ongoing_grpc_requests",
      "ray_serve_replica_processing_queries", "ray_serve_deployment_queued_queries"};
  if (gauges.contains(name)) return Reading::kGauge;
  // Serve counters (with or without the _total suffix Prometheus may add): use shows as growth.
  static const std::set<std::string> counters = {
      "ray_serve_num_http_requests", "ray_serve_num_grpc_requests",
      "ray_serve_deployment_request_counter", "ray_serve_num_router_requests"};
  std::string base = name;
  if (base.ends_with("_total")) base.resize(base.size() - 6);
  if (counters.contains(base)) return Reading::kCounter;
  return Reading::kIgnored;
}

std::string describe(const v1::MetricSample& s) {
  std::ostringstream out;
  out << s.name() << "{";
  for (int i = 0; i < s.labels_size(); ++i) {
    out << (i ? "," : "") << s.labels(i).name() << "=\"" << s.labels(i).value() << "\"";
  }
  out << "}=" << plugin::format_number(s.value());
  return out.str();
}

// A sample of another namespace than the workload's is not its own.
bool foreign(const v1::MetricSample& s, const std::string& ns) {
  if (ns.empty()) return false;
  for (const char* label : {"namespace", "exported_namespace"}) {
    std::string_view v = Samples::label(s, label);
    if (!v.empty() && v != ns) return true;
  }
  return false;
}

// dcgm-exporter reports GPUs no pod holds with pod="": not this workload's use.
bool unattached_gpu(const v1::MetricSample& s) {
  if (!s.name().starts_with("DCGM_")) return false;
  bool has_pod_label = false;
  for (const auto& l : s.labels()) {
    if (l.name() == "pod" || l.name() == "exported_pod") {
      has_pod_label = true;
      if (!l.value().empty()) return false;
    }
  }
  return has_pod_label;
}

struct Verdict {
  int relevant = 0;
  std::set<std::string> names;
  const v1::MetricSample* latest = nullptr;  // the latest sample that shows use
  std::string latest_why;

  void use(const v1::MetricSample& s, std::string why) {
    if (latest == nullptr || s.timestamp_ms() > latest->timestamp_ms()) {
      latest = &s;
      latest_why = std::move(why);
    }
  }
};

}  // namespace

v1::WorkloadActivity activity(const Workload& w, const Samples& samples, const Config& c) {
  kind_of(w);
  const std::string ns = w.namespace_();
  const double percent = c.gpu_util_threshold;
  Verdict v;
  std::map<std::string, std::vector<const v1::MetricSample*>> counters;
  for (const auto& s : samples) {
    Reading r = reading_of(s.name(), c);
    const double x = s.value();
    if (r == Reading::kIgnored || !std::isfinite(x) || x < 0 || foreign(s, ns) ||
        unattached_gpu(s)) {
      continue;
    }
    switch (r) {
      case Reading::kPercent:
        if (x > 100) continue;  // dcgm-exporter's "blank" sentinels are huge numbers
        if (x > percent) v.use(s, "above " + plugin::format_number(percent) + "%");
        break;
      case Reading::kRatio:
        if (x > 1) continue;
        if (x > percent / 100) v.use(s, "above " + plugin::format_number(percent / 100));
        break;
      case Reading::kTasks: {
        const std::string task(Samples::label(s, "Name"));
        const bool ignored = std::find(c.ignored_tasks.begin(), c.ignored_tasks.end(), task) !=
                             c.ignored_tasks.end();
        // Running tasks are use; tasks waiting for a node or their arguments are work submitted
        // to the cluster (a job sent to a cluster scaled to zero: it should wake).
        const std::string_view state = Samples::label(s, "State");
        if (x > 0 && !ignored) {
          if (state.starts_with("RUNNING")) v.use(s, "tasks running");
          if (state.starts_with("PENDING_") || state == "SUBMITTED_TO_WORKER")
            v.use(s, "tasks waiting");
        }
        break;
      }
      case Reading::kGauge:
        if (x > 0) v.use(s, "requests in flight");
        break;
      case Reading::kCounter:
        counters[Samples::series_key(s)].push_back(&s);
        continue;  // relevant only when compared, below
      case Reading::kIgnored:
        continue;
    }
    ++v.relevant;
    v.names.insert(s.name());
  }
  // A Serve counter that rose between two scrapes (a restart included) served requests between.
  for (auto& [key, series] : counters) {
    if (series.size() < 2) continue;
    std::stable_sort(series.begin(), series.end(), [](const auto* a, const auto* b) {
      return a->timestamp_ms() < b->timestamp_ms();
    });
    v.relevant += static_cast<int>(series.size());
    v.names.insert(series.front()->name());
    for (std::size_t i = 1; i < series.size(); ++i) {
      if (plugin::counter_rose(series[i - 1]->value(), series[i]->value())) {
        v.use(*series[i], "requests served");
      }
    }
  }
  if (v.latest != nullptr) {
    return plugin::active(describe(*v.latest) + ": " + v.latest_why, v.latest->timestamp_ms());
  }
  if (v.relevant == 0) return plugin::unknown_activity("no GPU or Ray sample of this workload");
  std::string names;
  for (const auto& n : v.names) names += (names.empty() ? "" : ", ") + n;
  return plugin::idle(std::to_string(v.relevant) + " samples (" + names + "), none shows use");
}

}  // namespace gpuaas::ray
