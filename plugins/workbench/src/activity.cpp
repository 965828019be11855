// Activity of a notebook. Evidence, strongest first:
//  - DCGM_FI_DEV_GPU_UTIL of the notebook's pod above gpu_util_threshold: the GPU is in use;
//  - jupyter_kernel_busyness (1 while a kernel's execution_state is "busy", as the culler reads
//    /api/kernels): code is running;
//  - the culler's notebooks.kubeflow.org/last-activity annotation and Jupyter Server's
//    jupyter_server_last_activity_timestamp_seconds: when the notebook was last used.
// Use in a sample -> ACTIVE. Samples or a last-activity time but no use -> IDLE, with that time
// as last_active so the daemon can compare it with the event time. Nothing -> UNKNOWN.
#include <algorithm>
#include <cmath>
#include <string>

#include "workbench.hpp"

namespace gpuaas::workbench {
namespace {

using plugin::Samples;

constexpr const char* kKernelBusy = "jupyter_kernel_busyness";
constexpr const char* kServerLastActivity = "jupyter_server_last_activity_timestamp_seconds";

// Whether a sample is about this notebook: its pod (the StatefulSet's "<name>-0") or, for
// samples that name no pod, a label naming the notebook; in its namespace when both say one.
bool belongs(const v1::MetricSample& s, const plugin::Workload& w, const std::string& pod) {
  std::string_view ns = Samples::namespace_(s);
  if (!ns.empty() && !w.namespace_().empty() && ns != w.namespace_()) return false;
  std::string_view p = Samples::pod(s);
  if (!p.empty()) return p == pod;
  for (const char* key : {"notebook", "name", "instance_name", "service_name"}) {
    if (Samples::label(s, key) == w.name()) return true;
  }
  return false;
}

}  // namespace

v1::WorkloadActivity activity(const plugin::Workload& w, const plugin::Samples& samples,
                              const Config& config) {
  const std::string pod = pod_name(w);
  int relevant = 0;  // samples about this notebook that speak for or against use
  bool annotated = false;
  std::string use;        // the first sample showing use, for the evidence
  int64_t last_use = -1;  // latest timestamp of a sample showing use; 0: the envelope's time
  int64_t last_seen = 0;  // latest last-activity time reported by the culler or the server
  std::string seen_from;

  for (const auto& s : samples) {
    if (!std::isfinite(s.value()) || !belongs(s, w, pod)) continue;
    bool in_use = false;
    if (s.name() == plugin::kGpuUtilMetric) {
      in_use = s.value() > config.gpu_util_threshold;
      if (in_use && use.empty()) {
        use = std::string(plugin::kGpuUtilMetric) + " " + plugin::format_number(s.value()) + " > " +
              plugin::format_number(config.gpu_util_threshold) + " on pod " + pod;
      }
    } else if (s.name() == kKernelBusy) {
      in_use = s.value() > 0;
      if (in_use && use.empty()) {
        use = std::string(kKernelBusy) + " " + plugin::format_number(s.value());
      }
    } else if (s.name() == kServerLastActivity) {
      // Unix seconds; outside 1970..9999 it is no time of use.
      if (s.value() <= 0 || s.value() > 253402300799.0) continue;
      const auto ms = static_cast<int64_t>(s.value() * 1000.0);
      if (ms > last_seen) {
        last_seen = ms;
        seen_from = kServerLastActivity;
      }
    } else {
      continue;
    }
    ++relevant;
    if (in_use) {
      // A sample without a timestamp is as recent as the batch: the latest there is.
      last_use =
          (last_use == 0 || s.timestamp_ms() == 0) ? 0 : std::max(last_use, s.timestamp_ms());
    }
  }

  if (const Json* a = w.find(kLastActivityPointer); a != nullptr && !a->is_null()) {
    const int64_t ms = a->is_string() ? plugin::parse_rfc3339_ms(a->get<std::string>()) : -1;
    if (ms < 0) {
      throw plugin::InvalidInput(std::string(kLastActivityPointer) +
                                 ": not an RFC 3339 time: " + a->dump());
    }
    annotated = true;
    if (ms > last_seen) {
      last_seen = ms;
      seen_from = std::string(kLastActivityAnnotation) + " " + a->get<std::string>();
    }
  }

  if (last_use >= 0) {
    return plugin::active(use, last_use == 0 ? 0 : std::max(last_use, last_seen));
  }
  if (relevant == 0 && !annotated) {
    return plugin::unknown_activity("no GPU, kernel or last-activity sample for pod " + pod +
                                    " and no last-activity annotation");
  }
  return plugin::idle("no use in " + std::to_string(relevant) + " sample(s) (GPU util <= " +
                          plugin::format_number(config.gpu_util_threshold) + ", no busy kernel)" +
                          (seen_from.empty() ? "" : "; last activity from " + seen_from),
                      last_seen);
}

}  // namespace gpuaas::workbench
