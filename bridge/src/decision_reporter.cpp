#include "gpuaas/bridge/decision_reporter.hpp"

#include <functional>
#include <nlohmann/json.hpp>

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

std::string DecisionReporter::event_json(const v1::Action& a, wire::EventTime now) const {
  const v1::ObjectRef& t = a.target();
  const std::string reason = event_reason(a.rule()).value_or("Decided");
  const std::string ts =
      wire::format_rfc3339(std::chrono::time_point_cast<std::chrono::seconds>(now));
  // Cluster-scoped objects (Nodes) get their Events in "default", as kubectl shows them.
  const std::string ns = t.namespace_().empty() ? "default" : t.namespace_();
  // One Event per decision: the name carries a hash of the decision id.
  const std::string name =
      name_safe(t.name()).substr(0, 200) + "." +
      std::to_string(std::hash<std::string>{}(a.decision_id()) % 100000000000ULL);
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
      {"message", a.reason().empty() ? a.rule() : a.reason() + " (" + a.rule() + ")"},
      {"type", reason == "Preempted" ? "Warning" : "Normal"},
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

HttpResult DecisionReporter::report_action(const v1::Action& a, wire::EventTime now) {
  if (!event_reason(a.rule())) return HttpResult{200, "", ""};
  const std::string ns = a.target().namespace_().empty() ? "default" : a.target().namespace_();
  return kube_.request("POST", "/api/v1/namespaces/" + ns + "/events", event_json(a, now));
}

std::string DecisionReporter::status_patch(const v1::WorkloadQueueStatus& s) {
  json status = {{"state", s.state()}, {"reason", s.reason()}, {"message", s.message()}};
  if (!s.cluster_queue().empty()) status["clusterQueue"] = s.cluster_queue();
  if (!s.local_queue().empty()) status["localQueue"] = s.local_queue();
  if (s.position() > 0) status["position"] = s.position();
  if (s.has_estimated_start()) {
    status["estimatedStart"] =
        wire::format_rfc3339(wire::EventTime(std::chrono::seconds(s.estimated_start().seconds())));
  }
  return json{{"metadata", {{"annotations", {{kStatusAnnotation, status.dump()}}}}}}.dump();
}

HttpResult DecisionReporter::report_status(const v1::WorkloadQueueStatus& s) {
  const v1::ObjectRef& w = s.workload();
  const ResourceConfig* r = cfg_.resource(w.api_version(), w.kind());
  if (r == nullptr) {
    return HttpResult{0, "", w.kind() + " (" + w.api_version() + ") is not among the resources"};
  }
  return kube_.request("PATCH", object_path(*r, r->namespaced ? w.namespace_() : "", w.name()),
                       status_patch(s), "application/merge-patch+json");
}

}  // namespace gpuaas::bridge
