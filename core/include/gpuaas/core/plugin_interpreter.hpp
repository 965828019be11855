// The plugin host as the core's WorkloadInterpreter: demand and lifecycle of each workload object
// from the plugin that claims its kind, what its kind declares (session, pod label), and the
// plugin list for `gpuaasctl plugins`. The host (host/) knows nothing of the core; this adapter is
// the one place the two meet.
#pragma once

#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"

namespace gpuaas::core {

class PluginInterpreter : public WorkloadInterpreter {
 public:
  explicit PluginInterpreter(host::PluginHost& host) : host_(host) {}
  std::optional<WorkloadView> interpret(const KubeObject& object) override;
  Result<v1::ActionSet> act(const KubeObject& object, WorkloadAction action,
                            const v1::ActionRequest& request) override;
  Result<v1::WorkloadActivity> activity(const KubeObject& object,
                                        const v1::MetricBatch& samples) override;
  void describe(const KubeObject& object, WorkloadView& view) const override;
  bool can(const KubeObject& object, uint64_t capability) const override;
  std::string plugins_json() const override;

 private:
  // The plugin that claims the object: none for an object without the queue label of a kind
  // declared queued-only.
  host::WorkloadPlugin* plugin_for(const KubeObject& object) const;

  host::PluginHost& host_;
};

}  // namespace gpuaas::core
