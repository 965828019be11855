// How the core learns what a workload object means without knowing its kind: an interpreter
// (the plugin host, in gpuaasd) answers demand and lifecycle for the objects it handles. The core
// keeps the answer beside the object and shows it; admission decides on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/policy/binding.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::core {

// What a plugin said about one workload object, recomputed on every change of the object.
struct WorkloadView {
  std::string plugin;  // the plugin that answered
  std::optional<v1::WorkloadDemand> demand;
  std::optional<v1::WorkloadLifecycle> lifecycle;
  std::string error;  // why demand or lifecycle is missing (the plugin's message)
  // From the kind's declaration, not the object: whether it is a session (NotebookPolicy applies),
  // and the pod label whose value names it ("" = its pods are found by their controller chain).
  bool session = false;
  std::string pod_label;
  // The kind's placement.binding default (its plugin declares it): required, preferred or off.
  policy::Binding binding = policy::Binding::kRequired;
};

// What a workload's plugin can do, for WorkloadInterpreter::can(). The bits are the ABI's
// GPUAAS_CAP_* (the host checks that they agree), kept here so the core needs no host header.
inline constexpr uint64_t kPluginCapDemand = 1ull << 0;       // demand()
inline constexpr uint64_t kPluginCapLifecycle = 1ull << 1;    // lifecycle()
inline constexpr uint64_t kPluginCapAdmission = 1ull << 2;    // action(): admit, suspend
inline constexpr uint64_t kPluginCapScaleToZero = 1ull << 3;  // action(): scale to zero and back
inline constexpr uint64_t kPluginCapActivity = 1ull << 4;     // activity()
inline constexpr uint64_t kPluginCapAutoscale = 1ull << 5;    // action(): set scale (ABI 1.3)

// What the core asks a workload's plugin to do (the values are GPUAAS_ACTION_*).
enum class WorkloadAction {
  kAdmit = 1,
  kSuspend = 2,
  kScaleToZero = 3,
  kScaleBack = 4,
  kSetScale = 5,  // the autoscaler's bounds (ActionRequest.scale)
};

class WorkloadInterpreter {
 public:
  virtual ~WorkloadInterpreter() = default;
  // nullopt: no plugin handles the object's kind (it stays a plain object in the model).
  virtual std::optional<WorkloadView> interpret(const KubeObject& object) = 0;
  // The patches that carry out `action` on the object (JSON merge patches from its plugin).
  // not_found: no plugin handles the kind, or it does not declare the capability.
  virtual Result<v1::ActionSet> act(const KubeObject& object, WorkloadAction action,
                                    const v1::ActionRequest& request) {
    (void)action;
    (void)request;
    return Status::not_found("no plugin acts on " + object.meta.kind);
  }
  // Whether the workload is in use, from samples already attributed to it (idle reclaim).
  // not_found: no plugin handles the kind, or it does not declare activity.
  virtual Result<v1::WorkloadActivity> activity(const KubeObject& object,
                                                const v1::MetricBatch& samples) {
    (void)samples;
    return Status::not_found("no plugin reads the activity of " + object.meta.kind);
  }
  // Fills what the kind declares (session, pod_label) into a view read back from a snapshot.
  virtual void describe(const KubeObject& object, WorkloadView& view) const {
    (void)object;
    (void)view;
  }
  // Whether the kind's plugin declares `capability` (kPluginCap* above).
  virtual bool can(const KubeObject& object, uint64_t capability) const {
    (void)object;
    (void)capability;
    return false;
  }
  // The loaded plugins and the refused libraries as JSON (what `gpuaasctl plugins` prints).
  virtual std::string plugins_json() const = 0;
};

// "Pending", "Running", ... as `gpuaasctl state` shows a lifecycle state.
const char* lifecycle_state_name(v1::WorkloadLifecycle::State s);

}  // namespace gpuaas::core
