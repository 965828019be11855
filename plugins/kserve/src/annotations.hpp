// KServe's stop annotation and JSON pointers to annotations.
#pragma once

#include <string>
#include <string_view>

#include "gpuaas/plugin/workload.hpp"

namespace gpuaas::kserve {

// "true" (any case, as KServe compares it) stops every component: KServe deletes their
// Deployments or Knative Services and reports the Stopped condition; removing it starts them.
inline constexpr const char* kStopAnnotation = "serving.kserve.io/stop";
// Knative's per-revision target utilisation, in percent (its default 70 applies to rps too).
inline constexpr const char* kTargetUtilizationAnnotation =
    "autoscaling.knative.dev/target-utilization-percentage";

// "/metadata/annotations/<key>" with the key escaped as RFC 6901 requires ('/' -> "~1").
inline std::string annotation_pointer(std::string_view key) {
  return "/metadata/annotations/" + plugin::pointer_token(key);
}

inline bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + 32) : ch; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

inline bool stopped(const plugin::Workload& w) {
  return equals_ignore_case(w.annotation(kStopAnnotation), "true");
}

}  // namespace gpuaas::kserve
