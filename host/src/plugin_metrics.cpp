#include "plugin_metrics.hpp"

#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::host::plugin {

std::string_view plugin_function_name(PluginFunction f) {
  switch (f) {
    case PluginFunction::kDemand:
      return "demand";
    case PluginFunction::kLifecycle:
      return "lifecycle";
    case PluginFunction::kAction:
      return "action";
    case PluginFunction::kActivity:
      return "activity";
    case PluginFunction::kCount:
      break;
  }
  return "unknown";
}

std::string_view call_error_name(CallError e) {
  switch (e) {
    case CallError::kInvalidInput:
      return "invalid_input";
    case CallError::kNotSupported:
      return "not_supported";
    case CallError::kInternal:
      return "internal";
    case CallError::kBadReply:
      return "bad_reply";
    case CallError::kCount:
      break;
  }
  return "unknown";
}

void PluginSeries::call(PluginFunction f) const {
  if (auto* c = calls[static_cast<int>(f)]) c->Increment();
}

void PluginSeries::error(CallError e) const {
  if (auto* c = errors[static_cast<int>(e)]) c->Increment();
}

void PluginSeries::set_disabled(bool d) const {
  if (disabled != nullptr) disabled->Set(d ? 1 : 0);
}

PluginMetrics::PluginMetrics(telemetry::Registry* registry) {
  if (registry == nullptr) return;
  auto& refusals = telemetry::BuildCounter()
                       .Name("gpuaas_plugin_refusals_total")
                       .Help("Plugin libraries refused at load, by reason.")
                       .Register(*registry);
  for (int i = 0; i < static_cast<int>(RefusalReason::kCount); ++i) {
    refusals_[i] = &refusals.Add(
        {{"reason", std::string(refusal_reason_label(static_cast<RefusalReason>(i)))}});
  }
  loaded_ = &telemetry::BuildGauge()
                 .Name("gpuaas_plugins_loaded")
                 .Help("Workload plugin instances loaded and created.")
                 .Register(*registry)
                 .Add({});
  calls_ = &telemetry::BuildCounter()
                .Name("gpuaas_plugin_calls_total")
                .Help("Calls that reached a plugin, by plugin and function.")
                .Register(*registry);
  errors_ = &telemetry::BuildCounter()
                 .Name("gpuaas_plugin_errors_total")
                 .Help("Plugin calls that returned no result, by plugin and code.")
                 .Register(*registry);
  disabled_ = &telemetry::BuildGauge()
                   .Name("gpuaas_plugin_disabled")
                   .Help("1 when a plugin was disabled after internal failures in a row.")
                   .Register(*registry);
}

void PluginMetrics::refused(RefusalReason reason) const {
  if (auto* c = refusals_[static_cast<int>(reason)]) c->Increment();
}

void PluginMetrics::set_loaded(std::size_t count) const {
  if (loaded_ != nullptr) loaded_->Set(static_cast<double>(count));
}

PluginSeries PluginMetrics::series(const std::string& plugin) const {
  PluginSeries s;
  if (calls_ == nullptr) return s;
  for (int i = 0; i < static_cast<int>(PluginFunction::kCount); ++i) {
    s.calls[i] = &calls_->Add(
        {{"plugin", plugin},
         {"function", std::string(plugin_function_name(static_cast<PluginFunction>(i)))}});
  }
  for (int i = 0; i < static_cast<int>(CallError::kCount); ++i) {
    s.errors[i] = &errors_->Add(
        {{"plugin", plugin}, {"code", std::string(call_error_name(static_cast<CallError>(i)))}});
  }
  s.disabled = &disabled_->Add({{"plugin", plugin}});
  s.set_disabled(false);
  return s;
}

}  // namespace gpuaas::host::plugin
