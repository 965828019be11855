// The plugin host's metrics. Every pointer is null when the host has no registry.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "refusal.hpp"

namespace gpuaas::telemetry {
class Registry;
class Counter;
class Gauge;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::host::plugin {

// The functions a call can reach, as the `function` label.
enum class PluginFunction { kDemand, kLifecycle, kAction, kActivity, kCount };
std::string_view plugin_function_name(PluginFunction f);

// Why a call returned no result, as the `code` label.
enum class CallError { kInvalidInput, kNotSupported, kInternal, kBadReply, kCount };
std::string_view call_error_name(CallError e);

// One plugin's series.
struct PluginSeries {
  std::array<telemetry::Counter*, static_cast<int>(PluginFunction::kCount)> calls{};
  std::array<telemetry::Counter*, static_cast<int>(CallError::kCount)> errors{};
  telemetry::Gauge* disabled = nullptr;

  void call(PluginFunction f) const;
  void error(CallError e) const;
  void set_disabled(bool d) const;
};

class PluginMetrics {
 public:
  explicit PluginMetrics(telemetry::Registry* registry);

  void refused(RefusalReason reason) const;
  void set_loaded(std::size_t count) const;
  PluginSeries series(const std::string& plugin) const;

 private:
  std::array<telemetry::Counter*, static_cast<int>(RefusalReason::kCount)> refusals_{};
  telemetry::Gauge* loaded_ = nullptr;
  telemetry::Family<telemetry::Counter>* calls_ = nullptr;
  telemetry::Family<telemetry::Counter>* errors_ = nullptr;
  telemetry::Family<telemetry::Gauge>* disabled_ = nullptr;
};

}  // namespace gpuaas::host::plugin
