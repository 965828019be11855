// Lifecycle from status.phase. A Pod still carrying the admission gate waits for admission
// whatever else it says (the scheduler reports it Pending with PodScheduled reason
// SchedulingGated). A Pod being deleted keeps its phase until its containers stop, and holds
// its resources until then, as Kueue counts it.
#include "pod.hpp"

namespace gpuaas::pod {
namespace {

// "<phase>: <status.reason>" when the kubelet gave one (Failed: Evicted), else the phase.
std::string with_reason(const Workload& w, const std::string& phase) {
  const Json* r = w.find("/status/reason");
  if (r != nullptr && r->is_string() && !r->get<std::string>().empty()) {
    return phase + ": " + r->get<std::string>();
  }
  return phase;
}

// Why a pending Pod is not running yet: the PodScheduled condition's reason (Unschedulable)
// when it is false, else the phase.
std::string pending_reason(const Workload& w) {
  const Json* c = w.condition("PodScheduled");
  if (c != nullptr && c->value("status", "") == "False" && c->contains("reason") &&
      (*c)["reason"].is_string()) {
    return "Pending: " + (*c)["reason"].get<std::string>();
  }
  return "Pending";
}

}  // namespace

v1::WorkloadLifecycle pod_lifecycle(const Workload& w) {
  std::string phase;
  if (const Json* p = w.find("/status/phase"); p != nullptr && !p->is_null()) {
    if (!p->is_string())
      throw plugin::InvalidInput("/status/phase: want a string, got " + p->dump());
    phase = p->get<std::string>();
  }
  const bool held = gated(w);  // read first: a malformed gate list is refused whatever the phase
  if (phase == "Succeeded") {
    return plugin::lifecycle(v1::WorkloadLifecycle::SUCCEEDED, with_reason(w, phase));
  }
  if (phase == "Failed") {
    return plugin::lifecycle(v1::WorkloadLifecycle::FAILED, with_reason(w, phase));
  }
  if (held) return plugin::lifecycle(v1::WorkloadLifecycle::PENDING, "SchedulingGated");
  if (phase == "Running") return plugin::lifecycle(v1::WorkloadLifecycle::RUNNING, "Running");
  // The node stopped reporting; its containers may well still run and hold the GPUs.
  if (phase == "Unknown") {
    return plugin::lifecycle(v1::WorkloadLifecycle::RUNNING, with_reason(w, "Unknown"));
  }
  if (phase == "Pending")
    return plugin::lifecycle(v1::WorkloadLifecycle::PENDING, pending_reason(w));
  if (phase.empty()) return plugin::lifecycle(v1::WorkloadLifecycle::PENDING, "no status yet");
  throw plugin::InvalidInput("/status/phase: unknown phase \"" + phase + "\"");
}

}  // namespace gpuaas::pod
