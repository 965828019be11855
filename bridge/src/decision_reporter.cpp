#include "gpuaas/bridge/decision_reporter.hpp"

#include <functional>
#include <nlohmann/json.hpp>

#include "gpuaas/bridge/event_publisher.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// Kubernetes names: lower case alphanumerics, '-' and '.'.
std::string name_safe(std::string_view s) {
  std::string out;
  for (char c : s) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-' || l == '.' ? l
                                                                                           : '-');
  }
  return out;
}

// Past this many workloads the remembered statuses are forgotten at once: a few annotations are
// written again, and deleted workloads cannot pile up.
constexpr std::size_t kMaxRemembered = 100000;

std::string workload_key(const v1::ObjectRef& w) {
  return w.api_version() + "/" + w.kind() + "/" + w.namespace_() + "/" + w.name();
}

}  // namespace

DecisionReporter::DecisionReporter(KubeClient& kube, const BridgeConfig& cfg)
    : kube_(kube), cfg_(cfg) {}

std::optional<std::string> DecisionReporter::event_reason(const std::string& rule) {
  if (starts_with(rule, "admission/")) return "Admitted";
  if (starts_with(rule, "preemption/") || rule == "reclaim/lend") return "Preempted";
  if (rule == "reclaim/idle") return "ScaledToZero";
  if (rule == "reclaim/wake") return "Woken";
  if (starts_with(rule, "notebook/")) return "Held";
  if (starts_with(rule, "scaleout/")) return "ScaledOut";
  if (starts_with(rule, "scalein/")) return "ScaledIn";
  return std::nullopt;
}

std::optional<std::string> DecisionReporter::status_event_reason(const std::string& state,
                                                                 const std::string& reason) {
  // These come with the action that made them, whose Event says so already.
  if (state == "Admitted" || state == "Evicting" || state == "ScaledToZero" ||
      state == "Finished" || reason == "Admitted" || reason == "ScaledToZero")
    return std::nullopt;
  if (reason == "Inadmissible" || reason == "ExceedsMaxQuota" || reason == "NoMatchingFlavor")
    return "Refused";
  return reason.empty() ? state : reason;
}

std::string DecisionReporter::event_body(const v1::ObjectRef& t, const std::string& reason,
                                         const std::string& message, bool warning,
                                         const std::string& seed, wire::EventTime now) const {
  const std::string ts =
      wire::format_rfc3339(std::chrono::time_point_cast<std::chrono::seconds>(now));
  // Cluster-scoped objects (Nodes) get their Events in "default", as kubectl shows them.
  const std::string ns = t.namespace_().empty() ? "default" : t.namespace_();
  // One Event per decision or status change: the name carries a hash of what it reports.
  const std::string name = name_safe(t.name()).substr(0, 200) + "." +
                           std::to_string(std::hash<std::string>{}(seed) % 100000000000ULL);
  json ev = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"involvedObject",
       {{"apiVersion", t.api_version()},
        {"kind", t.kind()},
        {"name", t.name()},
        {"namespace", t.namespace_()},
        {"uid", t.uid()}}},
      {"reason", reason},
      {"message", message},
      {"type", warning ? "Warning" : "Normal"},
      {"source", {{"component", "gpuaas"}}},
      {"reportingComponent", "gpuaas.io/bridge"},
      {"reportingInstance", "gpuaas-bridge-" + name_safe(cfg_.cluster)},
      {"firstTimestamp", ts},
      {"lastTimestamp", ts},
      {"count", 1},
  };
  if (t.namespace_().empty()) ev["involvedObject"].erase("namespace");
  return ev.dump();
}

std::string DecisionReporter::event_json(const v1::Action& a, wire::EventTime now) const {
  const std::string reason = event_reason(a.rule()).value_or("Decided");
  return event_body(a.target(), reason,
                    a.reason().empty() ? a.rule() : a.reason() + " (" + a.rule() + ")",
                    reason == "Preempted", a.decision_id(), now);
}

std::string DecisionReporter::status_event_json(const v1::WorkloadQueueStatus& s,
                                                wire::EventTime now) const {
  const std::string reason = status_event_reason(s.state(), s.reason()).value_or("Decided");
  std::string message = s.message().empty() ? s.reason() : s.message();
  if (!s.cluster_queue().empty()) message += " (ClusterQueue " + s.cluster_queue() + ")";
  const bool warning = reason == "Refused" || s.reason() == "MaxWaitExceeded";
  return event_body(s.workload(), reason, message, warning,
                    workload_key(s.workload()) + "/" + s.workload().uid() + "/" + s.state() + "/" +
                        s.reason() + "/" + std::to_string(now.time_since_epoch().count()),
                    now);
}

HttpResult DecisionReporter::post_event(const v1::ObjectRef& t, const std::string& body) {
  const std::string ns = t.namespace_().empty() ? "default" : t.namespace_();
  return kube_.request("POST", "/api/v1/namespaces/" + ns + "/events", body);
}

HttpResult DecisionReporter::report_action(const v1::Action& a, wire::EventTime now) {
  if (!event_reason(a.rule())) return HttpResult{200, "", ""};
  return post_event(a.target(), event_json(a, now));
}

std::string DecisionReporter::status_patch(const v1::WorkloadQueueStatus& s) {
  // Only what changes with the reason: the position, the estimated start and the message move
  // with every pass, and each write would bump the object's resourceVersion (conflicting with
  // gpuaas's own patches) and wake every watcher. `gpuaasctl explain` shows them live.
  json status = {{"state", s.state()}, {"reason", s.reason()}};
  if (!s.cluster_queue().empty()) status["clusterQueue"] = s.cluster_queue();
  if (!s.local_queue().empty()) status["localQueue"] = s.local_queue();
  return json{{"metadata", {{"annotations", {{kStatusAnnotation, status.dump()}}}}}}.dump();
}

HttpResult DecisionReporter::report_status(const v1::WorkloadQueueStatus& s) {
  return report_status(s, observed_now());
}

HttpResult DecisionReporter::report_status(const v1::WorkloadQueueStatus& s, wire::EventTime now) {
  const v1::ObjectRef& w = s.workload();
  const ResourceConfig* r = cfg_.resource(w.api_version(), w.kind());
  if (r == nullptr) {
    return HttpResult{0, "", w.kind() + " (" + w.api_version() + ") is not among the resources"};
  }
  const std::string key = workload_key(w);
  const std::string annotation = status_patch(s);
  {
    std::lock_guard lock(mutex_);
    auto it = last_status_.find(key);
    if (it != last_status_.end() && it->second.uid == w.uid() &&
        it->second.annotation == annotation) {
      ++unchanged_;
      return HttpResult{200, "", ""};
    }
  }
  HttpResult res =
      kube_.request("PATCH", object_path(*r, r->namespaced ? w.namespace_() : "", w.name()),
                    annotation, "application/merge-patch+json");
  if (!res.ok()) return res;  // remembered only once written: the next status tries again
  {
    std::lock_guard lock(mutex_);
    if (last_status_.size() >= kMaxRemembered) last_status_.clear();
    auto& last = last_status_[key];
    const bool reason_changed =
        last.uid != w.uid() || last.state != s.state() || last.reason != s.reason();
    last = {w.uid(), s.state(), s.reason(), annotation};
    if (!reason_changed || !status_event_reason(s.state(), s.reason())) return res;
  }
  return post_event(w, status_event_json(s, now));
}

uint64_t DecisionReporter::unchanged_statuses() const {
  std::lock_guard lock(mutex_);
  return unchanged_;
}

}  // namespace gpuaas::bridge
