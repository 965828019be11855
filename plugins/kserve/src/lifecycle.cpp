// Lifecycle from the stop annotation and the status KServe writes. An inference service never
// succeeds: it serves until deleted.
#include <string>

#include "annotations.hpp"
#include "gpuaas/plugin/lifecycle.hpp"
#include "kserve.hpp"

namespace gpuaas::kserve {
namespace {

std::string string_at(const plugin::Json* o, const char* key) {
  if (o == nullptr || !o->is_object()) return {};
  auto it = o->find(key);
  return it != o->end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + ": " + b;
}

}  // namespace

v1::WorkloadLifecycle lifecycle(const plugin::Workload& w) {
  using L = v1::WorkloadLifecycle;
  if (stopped(w))
    return plugin::lifecycle(L::SUSPENDED, "stopped by the serving.kserve.io/stop annotation");

  // KServe's own verdicts on the model: it failed to load, or the spec is invalid. Both stay
  // until the spec changes.
  std::string transition = string_at(w.find("/status/modelStatus"), "transitionStatus");
  if (transition == "BlockedByFailedLoad" || transition == "InvalidSpec") {
    const auto* info = w.find("/status/modelStatus/lastFailureInfo");
    return plugin::lifecycle(
        L::FAILED, join(transition, join(string_at(info, "reason"), string_at(info, "message"))));
  }

  const plugin::Json* ready = w.condition("Ready");
  std::string status = string_at(ready, "status");
  std::string reason = string_at(ready, "reason");
  std::string message = string_at(ready, "message");
  if (status == "True") return plugin::lifecycle(L::RUNNING, "Ready");
  // A failed Knative revision (crashing container, bad image) fails the service; a revision that
  // cannot be scheduled is waiting for capacity, which is gpuaas's business, not a failure.
  if (status == "False" && reason == "RevisionFailed" &&
      message.find("Unschedulable") == std::string::npos) {
    return plugin::lifecycle(L::FAILED, join(reason, message));
  }
  if (ready == nullptr) return plugin::lifecycle(L::PENDING, "no Ready condition yet");
  return plugin::lifecycle(L::PENDING, join("Ready " + status, join(reason, message)));
}

}  // namespace gpuaas::kserve
