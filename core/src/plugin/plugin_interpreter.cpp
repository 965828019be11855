#include "gpuaas/core/plugin_interpreter.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

namespace gpuaas::core {
namespace {

nlohmann::json capability_names(uint64_t caps) {
  nlohmann::json names = nlohmann::json::array();
  const std::pair<uint64_t, const char*> known[] = {{kPluginCapDemand, "demand"},
                                                    {kPluginCapLifecycle, "lifecycle"},
                                                    {kPluginCapAdmission, "admission"},
                                                    {kPluginCapScaleToZero, "scale-to-zero"},
                                                    {kPluginCapActivity, "activity"}};
  for (const auto& [bit, name] : known) {
    if ((caps & bit) != 0) names.push_back(name);
  }
  return names;
}

}  // namespace

std::optional<WorkloadView> PluginInterpreter::interpret(const KubeObject& object) {
  WorkloadPlugin* p = host_.find(object.meta.api_version, object.meta.kind);
  if (p == nullptr) return std::nullopt;
  WorkloadView view;
  view.plugin = p->name();
  auto note = [&](const char* what, const Status& s) {
    if (!view.error.empty()) view.error += "; ";
    view.error += std::string(what) + ": " + s.message();
  };
  if (auto d = p->demand(object.json)) {
    view.demand = std::move(d).value();
  } else {
    note("demand", d.status());
  }
  if (p->has(kPluginCapLifecycle)) {
    if (auto l = p->lifecycle(object.json)) {
      view.lifecycle = std::move(l).value();
    } else {
      note("lifecycle", l.status());
    }
  }
  if (!view.error.empty()) {
    spdlog::warn("{} {}/{}: {}", object.meta.kind, object.meta.namespace_, object.meta.name,
                 view.error);
  }
  return view;
}

Result<v1::ActionSet> PluginInterpreter::act(const KubeObject& object, WorkloadAction action,
                                             const v1::ActionRequest& request) {
  WorkloadPlugin* p = host_.find(object.meta.api_version, object.meta.kind);
  if (p == nullptr) return Status::not_found("no plugin handles " + object.meta.kind);
  return p->action(static_cast<PluginAction>(action), object.json, request);
}

Result<v1::WorkloadActivity> PluginInterpreter::activity(const KubeObject& object,
                                                         const v1::MetricBatch& samples) {
  WorkloadPlugin* p = host_.find(object.meta.api_version, object.meta.kind);
  if (p == nullptr) return Status::not_found("no plugin handles " + object.meta.kind);
  return p->activity(object.json, samples);
}

bool PluginInterpreter::can(const KubeObject& object, uint64_t capability) const {
  const WorkloadPlugin* p = host_.find(object.meta.api_version, object.meta.kind);
  return p != nullptr && !p->disabled() && p->has(capability);
}

std::string PluginInterpreter::plugins_json() const {
  nlohmann::json plugins = nlohmann::json::array();
  for (const auto& info : host_.plugins()) {
    nlohmann::json kinds = nlohmann::json::array();
    for (const auto& k : info.kinds) {
      kinds.push_back({{"group", k.group},
                       {"version", k.version},
                       {"kind", k.kind},
                       {"api_version", k.api_version()}});
    }
    plugins.push_back(
        {{"name", info.name},
         {"version", info.version},
         {"status", info.status},
         {"abi", std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor)},
         {"event_schema", info.event_schema},
         {"path", info.path},
         {"kinds", std::move(kinds)},
         {"capabilities", capability_names(info.capabilities)},
         {"disabled", info.disabled},
         {"disabled_reason", info.disabled_reason},
         {"calls", info.calls},
         {"errors", info.errors}});
  }
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& r : host_.refusals())
    refused.push_back({{"path", r.path}, {"reason", r.reason}});
  return nlohmann::json{{"plugins", std::move(plugins)}, {"refused", std::move(refused)}}.dump();
}

}  // namespace gpuaas::core
