// How the core learns what a workload object means without knowing its kind: an interpreter
// (the plugin host, in gpuaasd) answers demand and lifecycle for the objects it handles. The core
// keeps the answer beside the object and shows it; admission decides on it.
#pragma once

#include <optional>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::core {

// What a plugin said about one workload object, recomputed on every change of the object.
struct WorkloadView {
  std::string plugin;  // the plugin that answered
  std::optional<v1::WorkloadDemand> demand;
  std::optional<v1::WorkloadLifecycle> lifecycle;
  std::string error;  // why demand or lifecycle is missing (the plugin's message)
};

// What the core asks a workload's plugin to do (the values are GPUAAS_ACTION_*).
enum class WorkloadAction { kAdmit = 1, kSuspend = 2, kScaleToZero = 3, kScaleBack = 4 };

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
  // Whether the kind's plugin declares `capability` (kPluginCap* of workload_plugin.hpp).
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
