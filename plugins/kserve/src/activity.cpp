// Activity from request metrics and GPU use of the service's pods.
//
// Which samples are this service's: a pod label naming one of its pods (KServe names them
// "<isvc>-<component>-...", see pod_of), or a label naming the service itself: the pod label
// serving.kserve.io/inferenceservice as Prometheus relabels it, `isvc`, or Knative's
// service_name / configuration_name ("<isvc>-predictor", "-default" before KServe 0.9).
//
// What shows use:
//  - Knative queue-proxy counters revision_request_count / revision_app_request_count: a rise
//    between two samples of one series (active at the later sample; a reset to a non-zero value
//    counts too). A lone sample of a counter says nothing.
//  - vLLM gauges vllm:num_requests_running / vllm:num_requests_waiting above 0.
//  - dcgm-exporter DCGM_FI_DEV_GPU_UTIL above gpu_util_threshold percent.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/plugin/gpu_util.hpp"
#include "kserve.hpp"

namespace gpuaas::kserve {
namespace {

using plugin::Samples;
using Sample = v1::MetricSample;

constexpr std::string_view kComponentNames[] = {"predictor", "transformer", "explainer"};

enum class Signal { kNone, kCounter, kGauge, kGpuUtil };

Signal signal_of(std::string_view name) {
  if (name == "revision_request_count" || name == "revision_request_count_total" ||
      name == "revision_app_request_count" || name == "revision_app_request_count_total") {
    return Signal::kCounter;
  }
  if (name == "vllm:num_requests_running" || name == "vllm:num_requests_waiting") {
    return Signal::kGauge;
  }
  if (name == plugin::kGpuUtilMetric) return Signal::kGpuUtil;
  return Signal::kNone;
}

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// KServe's pods: "<isvc>-<component>-<replicaset hash>-<pod hash>" (Standard mode) or
// "<isvc>-<component>-00001-deployment-<hash>-<hash>" (a Knative revision); KServe before 0.9
// put "-default" after the component. Anything else is another object's pod.
bool pod_of(std::string_view pod, std::string_view isvc) {
  for (std::string_view component : kComponentNames) {
    std::string prefix = std::string(isvc) + "-" + std::string(component) + "-";
    if (pod.substr(0, prefix.size()) != prefix) continue;
    std::vector<std::string_view> parts;
    std::string_view rest = pod.substr(prefix.size());
    for (std::size_t at; (at = rest.find('-')) != std::string_view::npos;
         rest = rest.substr(at + 1)) {
      parts.push_back(rest.substr(0, at));
    }
    parts.push_back(rest);
    if (!parts.empty() && parts.front() == "default") parts.erase(parts.begin());
    if (std::any_of(parts.begin(), parts.end(), [](auto p) { return p.empty(); })) continue;
    if (parts.size() == 2) return true;
    if (parts.size() == 4 && digits(parts[0]) && parts[1] == "deployment") return true;
  }
  return false;
}

bool knative_name_of(std::string_view value, std::string_view isvc) {
  for (std::string_view component : kComponentNames) {
    std::string base = std::string(isvc) + "-" + std::string(component);
    if (value == base || value == base + "-default") return true;
  }
  return false;
}

class Matcher {
 public:
  explicit Matcher(const plugin::Workload& w) : name_(w.name()), namespace_(w.namespace_()) {}

  bool ours(const Sample& s) const {
    // Pod labels, each with the namespace label that goes with it.
    static constexpr std::pair<std::string_view, std::string_view> kPodLabels[] = {
        {"pod", "namespace"},
        {"exported_pod", "exported_namespace"},
        {"pod_name", "namespace_name"},
        {"destination_pod", "destination_namespace"}};
    for (const auto& [pod_label, ns_label] : kPodLabels) {
      std::string_view pod = Samples::label(s, pod_label);
      if (!pod.empty() && pod_of(pod, name_) && namespace_ok(Samples::label(s, ns_label))) {
        return true;
      }
    }
    bool named = false;
    for (std::string_view l : {"isvc", "serving_kserve_io_inferenceservice",
                               "label_serving_kserve_io_inferenceservice"}) {
      named = named || Samples::label(s, l) == name_;
    }
    for (std::string_view l : {"service_name", "configuration_name", "destination_configuration"}) {
      named = named || knative_name_of(Samples::label(s, l), name_);
    }
    if (!named) return false;
    // Any namespace label present must agree with one of them naming ours.
    bool any = false;
    for (std::string_view l :
         {"namespace", "exported_namespace", "namespace_name", "destination_namespace"}) {
      std::string_view ns = Samples::label(s, l);
      if (ns.empty()) continue;
      any = true;
      if (namespace_ok(ns)) return true;
    }
    return !any;
  }

 private:
  bool namespace_ok(std::string_view ns) const {
    return ns.empty() || namespace_.empty() || ns == namespace_;
  }
  std::string name_;
  std::string namespace_;
};

std::string who(const Sample& s) {
  for (std::string_view l : {"pod", "exported_pod", "pod_name", "destination_pod", "isvc",
                             "service_name", "configuration_name"}) {
    std::string_view v = Samples::label(s, l);
    if (!v.empty()) return std::string(l) + "=" + std::string(v);
  }
  return "the service";
}

// Every digit, so a rise of one in a large request counter shows in the evidence.
constexpr plugin::NumberStyle kDigits = plugin::NumberStyle::kDecimal;

}  // namespace

v1::WorkloadActivity activity(const plugin::Workload& w, const Samples& samples,
                              const Config& config) {
  Matcher matcher(w);
  std::map<std::string, std::vector<const Sample*>> counters;
  int relevant = 0;
  int64_t last_active = -1;
  std::string evidence;
  auto use = [&](int64_t at, std::string why) {
    if (at > last_active) {
      last_active = at;
      evidence = std::move(why);
    }
  };

  for (const Sample& s : samples) {
    Signal signal = signal_of(s.name());
    if (signal == Signal::kNone || !matcher.ours(s)) continue;
    switch (signal) {
      case Signal::kCounter:
        counters[Samples::series_key(s)].push_back(&s);
        break;
      case Signal::kGauge:
        ++relevant;
        if (s.value() > 0) {
          use(s.timestamp_ms(),
              s.name() + " " + plugin::format_number(s.value(), kDigits) + " on " + who(s));
        }
        break;
      case Signal::kGpuUtil:
        ++relevant;
        if (s.value() > config.gpu_util_threshold) {
          use(s.timestamp_ms(),
              "GPU utilization " + plugin::format_number(s.value(), kDigits) + "% > " +
                  plugin::format_number(config.gpu_util_threshold, kDigits) + "% on " + who(s));
        }
        break;
      case Signal::kNone:
        break;
    }
  }
  for (auto& [key, series] : counters) {
    if (series.size() < 2) continue;  // one sample of a counter cannot show a change
    relevant += static_cast<int>(series.size());
    std::stable_sort(series.begin(), series.end(), [](const Sample* a, const Sample* b) {
      return a->timestamp_ms() < b->timestamp_ms();
    });
    for (std::size_t i = 1; i < series.size(); ++i) {
      const Sample& before = *series[i - 1];
      const Sample& after = *series[i];
      if (plugin::counter_rose(before.value(), after.value())) {
        use(after.timestamp_ms(),
            after.name() + " rose from " + plugin::format_number(before.value(), kDigits) + " to " +
                plugin::format_number(after.value(), kDigits) + " on " + who(after));
      }
    }
  }

  if (last_active >= 0) return plugin::active(evidence, last_active);
  if (relevant > 0) {
    return plugin::idle(std::to_string(relevant) +
                        " samples of its request counters, vLLM queues and GPU utilization show "
                        "no use");
  }
  return plugin::unknown_activity("no request, vLLM or GPU samples of this InferenceService");
}

}  // namespace gpuaas::kserve
