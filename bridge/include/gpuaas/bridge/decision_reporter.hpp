// Shows gpuaas's decisions where Kubernetes users look: a Kubernetes Event on the object for each
// decision carried out (admitted, preempted, scaled to zero, woken...) and for each change of a
// workload's queue reason that no action reports (waiting for quota, refused...), and the
// annotation gpuaas.io/status with the workload's state, reason and queues, so `kubectl
// describe` says why a workload waits. Nothing is written while the reason stays the same:
// positions and estimated starts change with every pass and stay in `gpuaasctl explain`.
#pragma once

#include <map>
#include <mutex>
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
  // The Event's reason for a queue status: "Refused" (Inadmissible, ExceedsMaxQuota,
  // NoMatchingFlavor; a Warning), else the status reason ("WaitingForQuota", "QuotaReleased"...).
  // nullopt for states an action's Event reports (Admitted, Evicting, ScaledToZero, Finished).
  static std::optional<std::string> status_event_reason(const std::string& state,
                                                        const std::string& reason);

  // The core/v1 Event for an applied action, as JSON (tests read it).
  std::string event_json(const v1::Action& action, wire::EventTime now) const;
  // Creates it; an action whose rule has no reason gives an ok result and no request.
  HttpResult report_action(const v1::Action& action, wire::EventTime now);

  // The merge patch carrying the status annotation, as JSON: state, reason, clusterQueue,
  // localQueue (never the position, the estimated start or the message).
  static std::string status_patch(const v1::WorkloadQueueStatus& status);
  // The Event for a status whose reason changed, as JSON.
  std::string status_event_json(const v1::WorkloadQueueStatus& status, wire::EventTime now) const;
  // Patches the workload's annotation when it differs from the one last written for it (a new
  // object, uid, starts again), and then creates an Event when the state or reason changed and
  // status_event_reason has one. Unchanged: an ok result and no request. A kind the bridge does
  // not know gives an error result; a failed patch is not remembered (the next status tries).
  HttpResult report_status(const v1::WorkloadQueueStatus& status, wire::EventTime now);
  HttpResult report_status(const v1::WorkloadQueueStatus& status);  // at observed_now()

  // Statuses that wrote nothing, their annotation unchanged.
  uint64_t unchanged_statuses() const;

 private:
  std::string event_body(const v1::ObjectRef& target, const std::string& reason,
                         const std::string& message, bool warning, const std::string& seed,
                         wire::EventTime now) const;
  HttpResult post_event(const v1::ObjectRef& target, const std::string& body);

  struct Written {
    std::string uid, state, reason, annotation;
  };

  KubeClient& kube_;
  const BridgeConfig& cfg_;
  mutable std::mutex mutex_;  // last_status_, unchanged_
  // What was last written per workload (apiVersion/kind/namespace/name), in this process: after
  // a restart each workload's next status writes once more.
  std::map<std::string, Written> last_status_;
  uint64_t unchanged_ = 0;
};

}  // namespace gpuaas::bridge
