// Lifecycle from the stop annotation and the status the notebook controller copies from its
// StatefulSet (readyReplicas) and pod (containerState, conditions).
//
// A container waiting in CrashLoopBackOff or ImagePullBackOff is PENDING with that reason, not
// FAILED: the pod stays bound to its node and holds its GPUs while the kubelet keeps retrying,
// the user can fix the image and the notebook recovers, and notebooks have no terminal state.
// Reporting FAILED would let the daemon release quota that the pod still occupies; a notebook
// that never comes up shows no use and is reclaimed as idle instead.
#include <cstdint>

#include "gpuaas/plugin/lifecycle.hpp"
#include "workbench.hpp"

namespace gpuaas::workbench {
namespace {

std::string string_field(const Json& o, const char* key, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  if (!it->is_string()) throw plugin::InvalidInput(where + "/" + key + ": not a string");
  return it->get<std::string>();
}

// A string member, "" when absent or of another type (for fields only shown to people).
std::string text(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string with_message(std::string reason, const std::string& message) {
  if (!message.empty()) reason += ": " + message;
  return reason;
}

}  // namespace

v1::WorkloadLifecycle lifecycle(const plugin::Workload& w) {
  using L = v1::WorkloadLifecycle;
  const int64_t ready = w.count_at(kReadyReplicas, 0);
  if (ready > INT32_MAX) {
    throw plugin::InvalidInput(std::string(kReadyReplicas) + ": " + std::to_string(ready) +
                               " is above the int32 range");
  }
  if (w.has_annotation(kStopAnnotation)) {
    if (ready > 0)
      return plugin::lifecycle(L::SUSPENDED, "stopping: kubeflow-resource-stopped is set");
    return plugin::lifecycle(L::SUSPENDED, "stopped: kubeflow-resource-stopped is set");
  }
  if (ready >= 1) return plugin::lifecycle(L::RUNNING, "ready");

  static const std::string kState = "/status/containerState";
  if (const Json* cs = w.find(kState); cs != nullptr && !cs->is_null()) {
    if (!cs->is_object()) throw plugin::InvalidInput(kState + ": not an object");
    if (cs->contains("running")) return plugin::lifecycle(L::RUNNING, "container running");
    if (auto it = cs->find("waiting"); it != cs->end() && it->is_object()) {
      std::string reason = string_field(*it, "reason", kState + "/waiting");
      if (reason.empty()) reason = "container waiting";
      return plugin::lifecycle(
          L::PENDING,
          with_message(std::move(reason), string_field(*it, "message", kState + "/waiting")));
    }
    if (auto it = cs->find("terminated"); it != cs->end() && it->is_object()) {
      std::string reason = string_field(*it, "reason", kState + "/terminated");
      return plugin::lifecycle(
          L::PENDING,
          "container terminated" + (reason.empty() ? "" : " (" + reason + ")") + ", restarting");
    }
  }
  // Pod conditions copied onto the notebook: an unschedulable pod says why.
  if (const Json* conds = w.find("/status/conditions"); conds != nullptr && conds->is_array()) {
    for (const auto& c : *conds) {
      if (!c.is_object() || text(c, "status") == "True") continue;
      std::string reason = text(c, "reason");
      if (!reason.empty())
        return plugin::lifecycle(L::PENDING, with_message(reason, text(c, "message")));
    }
  }
  return plugin::lifecycle(L::PENDING, "waiting for the notebook pod");
}

}  // namespace gpuaas::workbench
