#include "gpuaas/plugin/config.hpp"

#include <cmath>

#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/lifecycle.hpp"

namespace gpuaas::plugin {

double config_percentage(const std::string& key, const Json& value) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
      value.get<double>() > 100) {
    throw InvalidInput("plugin configuration: " + key + ": want a percentage from 0 to 100, got " +
                       value.dump());
  }
  return value.get<double>();
}

bool config_flag(const std::string& key, const Json& value) {
  if (!value.is_boolean()) {
    throw InvalidInput("plugin configuration: " + key + ": want true or false, got " +
                       value.dump());
  }
  return value.get<bool>();
}

void config_unknown(const std::string& key, const std::string& known) {
  throw InvalidInput("plugin configuration: unknown setting \"" + key + "\" (known: " + known +
                     ")");
}

v1::WorkloadLifecycle lifecycle(v1::WorkloadLifecycle::State state, std::string reason) {
  v1::WorkloadLifecycle l;
  l.set_state(state);
  l.set_reason(std::move(reason));
  return l;
}

std::string describe_condition(const Workload& w, std::string_view type) {
  std::string out(type);
  if (const Json* c = w.condition(type)) {
    const std::string reason = c->value("reason", "");
    if (!reason.empty() && reason != out) out += ": " + reason;
  }
  return out;
}

}  // namespace gpuaas::plugin
