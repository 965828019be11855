// The plugin host as the core's WorkloadInterpreter: demand and lifecycle of each workload object
// from the plugin that claims its kind, and the plugin list for `gpuaasctl plugins`.
#pragma once

#include "gpuaas/core/plugin_host.hpp"
#include "gpuaas/core/workload_interpreter.hpp"

namespace gpuaas::core {

class PluginInterpreter : public WorkloadInterpreter {
 public:
  explicit PluginInterpreter(PluginHost& host) : host_(host) {}
  std::optional<WorkloadView> interpret(const KubeObject& object) override;
  Result<v1::ActionSet> act(const KubeObject& object, WorkloadAction action,
                            const v1::ActionRequest& request) override;
  Result<v1::WorkloadActivity> activity(const KubeObject& object,
                                        const v1::MetricBatch& samples) override;
  bool can(const KubeObject& object, uint64_t capability) const override;
  std::string plugins_json() const override;

 private:
  PluginHost& host_;
};

}  // namespace gpuaas::core
