#include "gpuaas/core/plugin_interpreter.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

namespace gpuaas::core {
namespace {

using host::WorkloadPlugin;

static_assert(kPluginCapDemand == host::kPluginCapDemand);
static_assert(kPluginCapLifecycle == host::kPluginCapLifecycle);
static_assert(kPluginCapAdmission == host::kPluginCapAdmission);
static_assert(kPluginCapScaleToZero == host::kPluginCapScaleToZero);
static_assert(kPluginCapActivity == host::kPluginCapActivity);
static_assert(kPluginCapAutoscale == host::kPluginCapAutoscale);
static_assert(static_cast<int>(WorkloadAction::kAdmit) ==
              static_cast<int>(host::PluginAction::kAdmit));
static_assert(static_cast<int>(WorkloadAction::kSuspend) ==
              static_cast<int>(host::PluginAction::kSuspend));
static_assert(static_cast<int>(WorkloadAction::kScaleToZero) ==
              static_cast<int>(host::PluginAction::kScaleToZero));
static_assert(static_cast<int>(WorkloadAction::kScaleBack) ==
              static_cast<int>(host::PluginAction::kScaleBack));
static_assert(static_cast<int>(WorkloadAction::kSetScale) ==
              static_cast<int>(host::PluginAction::kSetScale));

nlohmann::json capability_names(uint64_t caps) {
  nlohmann::json names = nlohmann::json::array();
  const std::pair<uint64_t, const char*> known[] = {
      {kPluginCapDemand, "demand"},       {kPluginCapLifecycle, "lifecycle"},
      {kPluginCapAdmission, "admission"}, {kPluginCapScaleToZero, "scale-to-zero"},
      {kPluginCapActivity, "activity"},   {kPluginCapAutoscale, "autoscale"}};
  for (const auto& [bit, name] : known) {
    if ((caps & bit) != 0) names.push_back(name);
  }
  return names;
}

// {"type": "setTrue", "path": ...}, {"type": "annotation", "key", "value", "anyValue"},
// {"type": "schedulingGate", "name": ...} or {"type": "none"}: as the bridge's `holds:` says it.
nlohmann::json hold_json(const host::KindHold& h) {
  nlohmann::json j = {{"type", host::hold_type_name(h.type)}};
  switch (h.type) {
    case host::KindHold::Type::kSetTrue:
      j["path"] = h.target;
      break;
    case host::KindHold::Type::kAnnotation:
      j["key"] = h.target;
      j["value"] = h.value;
      j["anyValue"] = h.any_value;
      break;
    case host::KindHold::Type::kSchedulingGate:
      j["name"] = h.target;
      break;
    case host::KindHold::Type::kNone:
      break;
  }
  return j;
}

}  // namespace

host::WorkloadPlugin* PluginInterpreter::plugin_for(const KubeObject& object) const {
  WorkloadPlugin* p = host_.find(object.meta.api_version, object.meta.kind);
  if (p == nullptr) return nullptr;
  const auto* k = p->kind_of(object.meta.api_version, object.meta.kind);
  if (k != nullptr && k->queued_only) {
    // E.g. Pods: only a queued one is a workload; the others are only counted on their node.
    auto label = object.meta.labels.find(std::string(host::kQueueLabel));
    if (label == object.meta.labels.end() || label->second.empty()) return nullptr;
  }
  return p;
}

namespace {
policy::Binding binding_of(host::KindBinding b) {
  switch (b) {
    case host::KindBinding::kPreferred:
      return policy::Binding::kPreferred;
    case host::KindBinding::kOff:
      return policy::Binding::kOff;
    case host::KindBinding::kRequired:
      break;
  }
  return policy::Binding::kRequired;
}
}  // namespace

std::optional<WorkloadView> PluginInterpreter::interpret(const KubeObject& object) {
  WorkloadPlugin* p = plugin_for(object);
  if (p == nullptr) return std::nullopt;
  WorkloadView view;
  view.plugin = p->name();
  if (const auto* k = p->kind_of(object.meta.api_version, object.meta.kind)) {
    view.session = k->session;
    view.pod_label = k->pod_label;
    view.binding = binding_of(k->binding);
  }
  auto note = [&](const char* what, const Status& s) {
    if (!view.error.empty()) view.error += "; ";
    view.error += std::string(what) + ": " + s.message();
  };
  if (auto d = p->demand(object.json)) {
    view.demand = std::move(d).value();
  } else if (d.status().code() == StatusCode::kNotFound) {
    return std::nullopt;  // the plugin says this one is no workload (a DaemonSet's Pod)
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
  WorkloadPlugin* p = plugin_for(object);
  if (p == nullptr) return Status::not_found("no plugin handles " + object.meta.kind);
  return p->action(static_cast<host::PluginAction>(action), object.json, request);
}

Result<v1::WorkloadActivity> PluginInterpreter::activity(const KubeObject& object,
                                                         const v1::MetricBatch& samples) {
  WorkloadPlugin* p = plugin_for(object);
  if (p == nullptr) return Status::not_found("no plugin handles " + object.meta.kind);
  return p->activity(object.json, samples);
}

void PluginInterpreter::describe(const KubeObject& object, WorkloadView& view) const {
  const WorkloadPlugin* p = host_.find(object.meta.api_version, object.meta.kind);
  if (p == nullptr) return;
  if (const auto* k = p->kind_of(object.meta.api_version, object.meta.kind)) {
    view.session = k->session;
    view.pod_label = k->pod_label;
    view.binding = binding_of(k->binding);
  }
}

bool PluginInterpreter::can(const KubeObject& object, uint64_t capability) const {
  const WorkloadPlugin* p = plugin_for(object);
  return p != nullptr && !p->disabled() && p->has(capability);
}

std::string PluginInterpreter::plugins_json() const {
  nlohmann::json plugins = nlohmann::json::array();
  for (const auto& info : host_.plugins()) {
    nlohmann::json kinds = nlohmann::json::array();
    for (const auto& k : info.kinds) {
      kinds.push_back(
          {{"group", k.group},
           {"version", k.version},
           {"kind", k.kind},
           {"api_version", k.api_version()},
           {"plural", k.plural},
           {"namespaced", k.namespaced},
           {"hold", hold_json(k.hold)},
           {"pods", k.pod_label.empty() ? nlohmann::json{{"by", "owner"}}
                                        : nlohmann::json{{"by", "label"}, {"label", k.pod_label}}},
           {"session", k.session},
           {"queued_only", k.queued_only},
           {"binding", std::string(host::binding_name(k.binding))},
           {"kind_info", k.declared ? "declared" : "defaults"}});
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
