// Shows gpuaas's decisions where Kubernetes users look: a Kubernetes Event on the object for each
// decision carried out (admitted, preempted, scaled to zero, woken...), and the annotation
// gpuaas.io/status with the daemon's latest queue status (state, reason, ClusterQueue, position),
// so `kubectl describe` says why a workload waits.
#pragma once

#include <optional>
#include <string>

#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/bridge/kube_client.hpp"
#include "gpuaas/v1/action.pb.h"
#include "gpuaas/v1/event.pb.h"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::bridge {

inline constexpr const char* kStatusAnnotation = "gpuaas.io/status";

class DecisionReporter {
 public:
  DecisionReporter(KubeClient& kube, const BridgeConfig& cfg);

  // The Event's reason for a rule ("admission/quota" -> "Admitted"); nullopt for rules not shown
  // as Events (a Machine's delete annotation is not news to its users).
  static std::optional<std::string> event_reason(const std::string& rule);

  // The core/v1 Event for an applied action, as JSON (tests read it).
  std::string event_json(const v1::Action& action, wire::EventTime now) const;
  // Creates it; an action whose rule has no reason gives an ok result and no request.
  HttpResult report_action(const v1::Action& action, wire::EventTime now);

  // The merge patch carrying the status annotation, as JSON.
  static std::string status_patch(const v1::WorkloadQueueStatus& status);
  // Patches the workload; a kind the bridge does not know gives an error result.
  HttpResult report_status(const v1::WorkloadQueueStatus& status);

 private:
  KubeClient& kube_;
  const BridgeConfig& cfg_;
};

}  // namespace gpuaas::bridge
