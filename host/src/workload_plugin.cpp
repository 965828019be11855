#include "gpuaas/host/workload_plugin.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <climits>

#include "plugin_text.hpp"
#include "workload_plugin_impl.hpp"

namespace gpuaas::host {
namespace {

using plugin::CallError;
using plugin::PluginFunction;

static_assert(static_cast<int>(PluginAction::kAdmit) == GPUAAS_ACTION_ADMIT);
static_assert(static_cast<int>(PluginAction::kSuspend) == GPUAAS_ACTION_SUSPEND);
static_assert(static_cast<int>(PluginAction::kScaleToZero) == GPUAAS_ACTION_SCALE_TO_ZERO);
static_assert(static_cast<int>(PluginAction::kScaleBack) == GPUAAS_ACTION_SCALE_BACK);
static_assert(static_cast<int>(PluginAction::kSetScale) == GPUAAS_ACTION_SET_SCALE);
static_assert(kPluginCapAutoscale == GPUAAS_CAP_AUTOSCALE);

gpuaas_bytes bytes(std::string_view s) { return {s.data(), s.size()}; }

std::string prefix(const WorkloadPlugin::Impl& p, PluginFunction f) {
  return fmt::format("plugin {}: {}(): ", p.info.name, plugin::plugin_function_name(f));
}

// A result that is not the plugin's failure (invalid input, not supported): counted, no streak.
Status plain_error(WorkloadPlugin::Impl& p, CallError code, Status status) {
  p.metrics.error(code);
  std::lock_guard lock(p.state_mutex);
  ++p.errors;
  return status;
}

// An internal failure: counted toward disabling the instance.
Status failure(WorkloadPlugin::Impl& p, PluginFunction f, CallError code, std::string message) {
  p.metrics.error(code);
  std::string text = prefix(p, f) + message;
  std::lock_guard lock(p.state_mutex);
  ++p.errors;
  ++p.failures_in_a_row;
  const uint32_t limit = p.max_consecutive_failures;
  if (!p.disabled && limit > 0 && p.failures_in_a_row >= limit) {
    p.disabled = true;
    p.disabled_reason =
        fmt::format("{} internal failures in a row, the last: {}", p.failures_in_a_row, text);
    p.metrics.set_disabled(true);
    spdlog::error("plugin {} disabled: {}", p.info.name, p.disabled_reason);
  }
  return Status::internal(std::move(text));
}

// Calls the plugin (invoke(instance, &out) -> rc) and maps its answer; see workload_plugin.hpp.
template <typename Msg, typename Invoke>
Result<Msg> call(WorkloadPlugin::Impl& p, PluginFunction f, uint64_t needed,
                 std::string_view needed_text, Invoke&& invoke) {
  if ((p.info.capabilities & needed) == 0) {
    return Status::not_found(
        fmt::format("plugin {} does not declare capability {}", p.info.name, needed_text));
  }
  std::lock_guard call_lock(p.call_mutex);
  {
    std::lock_guard lock(p.state_mutex);
    if (p.disabled) {
      return Status::unavailable(
          fmt::format("plugin {} disabled: {}", p.info.name, p.disabled_reason));
    }
    ++p.calls;
  }
  p.metrics.call(f);
  gpuaas_bytes out{nullptr, 0};
  const gpuaas_rc rc = invoke(p.instance, &out);
  if (rc == GPUAAS_RC_OK) {
    Msg reply;
    const bool readable = (out.data != nullptr || out.size == 0) && out.size <= INT_MAX;
    if (readable &&
        reply.ParseFromArray(out.data != nullptr ? out.data : "", static_cast<int>(out.size))) {
      std::lock_guard lock(p.state_mutex);
      p.failures_in_a_row = 0;
      return reply;
    }
    return failure(
        p, f, CallError::kBadReply,
        fmt::format("the reply ({} bytes) is not a {}", out.size, Msg::descriptor()->full_name()));
  }
  const std::string message = plugin::printable(out.data, out.size);
  switch (rc) {
    case GPUAAS_RC_INVALID_INPUT:
      return plain_error(p, CallError::kInvalidInput, Status::invalid(prefix(p, f) + message));
    case GPUAAS_RC_NOT_SUPPORTED:
      return plain_error(p, CallError::kNotSupported, Status::not_found(prefix(p, f) + message));
    case GPUAAS_RC_INTERNAL:
      return failure(p, f, CallError::kInternal, message);
    default:
      return failure(p, f, CallError::kBadReply,
                     fmt::format("unknown return code {}: {}", rc, message));
  }
}

}  // namespace

std::string_view plugin_action_name(PluginAction action) {
  switch (action) {
    case PluginAction::kAdmit:
      return "admit";
    case PluginAction::kSuspend:
      return "suspend";
    case PluginAction::kScaleToZero:
      return "scale_to_zero";
    case PluginAction::kScaleBack:
      return "scale_back";
    case PluginAction::kSetScale:
      return "set_scale";
  }
  return "unknown";
}

std::string_view hold_type_name(KindHold::Type type) {
  switch (type) {
    case KindHold::Type::kNone:
      return "none";
    case KindHold::Type::kSetTrue:
      return "setTrue";
    case KindHold::Type::kAnnotation:
      return "annotation";
    case KindHold::Type::kSchedulingGate:
      return "schedulingGate";
  }
  return "none";
}

std::string_view binding_name(KindBinding binding) {
  switch (binding) {
    case KindBinding::kRequired:
      return "required";
    case KindBinding::kPreferred:
      return "preferred";
    case KindBinding::kOff:
      return "off";
  }
  return "required";
}

std::string PluginKind::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

WorkloadPlugin::WorkloadPlugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WorkloadPlugin::~WorkloadPlugin() {
  if (impl_ && impl_->instance != nullptr) {
    std::lock_guard lock(impl_->call_mutex);
    impl_->api.destroy(impl_->instance);
    impl_->instance = nullptr;
  }
}

const std::string& WorkloadPlugin::name() const { return impl_->info.name; }

PluginInfo WorkloadPlugin::info() const {
  std::lock_guard lock(impl_->state_mutex);
  PluginInfo out = impl_->info;
  out.calls = impl_->calls;
  out.errors = impl_->errors;
  out.disabled = impl_->disabled;
  out.disabled_reason = impl_->disabled_reason;
  return out;
}

bool WorkloadPlugin::handles(std::string_view api_version, std::string_view kind) const {
  return kind_of(api_version, kind) != nullptr;
}

const PluginKind* WorkloadPlugin::kind_of(std::string_view api_version,
                                          std::string_view kind) const {
  for (const auto& k : impl_->info.kinds) {
    if (k.kind != kind) continue;
    if (k.group.empty()
            ? api_version == k.version
            : api_version.size() == k.group.size() + 1 + k.version.size() &&
                  api_version.starts_with(k.group) && api_version[k.group.size()] == '/' &&
                  api_version.ends_with(k.version)) {
      return &k;
    }
  }
  return nullptr;
}

bool WorkloadPlugin::has(uint64_t capability) const {
  return capability != 0 && (impl_->info.capabilities & capability) == capability;
}

bool WorkloadPlugin::disabled() const {
  std::lock_guard lock(impl_->state_mutex);
  return impl_->disabled;
}

Result<v1::WorkloadDemand> WorkloadPlugin::demand(std::string_view object_json) {
  auto& api = impl_->api;
  return call<v1::WorkloadDemand>(
      *impl_, PluginFunction::kDemand, GPUAAS_CAP_DEMAND, "DEMAND",
      [&](gpuaas_plugin* p, gpuaas_bytes* out) { return api.demand(p, bytes(object_json), out); });
}

Result<v1::WorkloadLifecycle> WorkloadPlugin::lifecycle(std::string_view object_json) {
  auto& api = impl_->api;
  return call<v1::WorkloadLifecycle>(*impl_, PluginFunction::kLifecycle, GPUAAS_CAP_LIFECYCLE,
                                     "LIFECYCLE", [&](gpuaas_plugin* p, gpuaas_bytes* out) {
                                       return api.lifecycle(p, bytes(object_json), out);
                                     });
}

Result<v1::ActionSet> WorkloadPlugin::action(PluginAction what, std::string_view object_json,
                                             const v1::ActionRequest& request) {
  uint64_t cap = 0;
  const char* cap_name = "";
  switch (what) {
    case PluginAction::kAdmit:
    case PluginAction::kSuspend:
      cap = GPUAAS_CAP_ADMISSION;
      cap_name = "ADMISSION";
      break;
    case PluginAction::kScaleToZero:
    case PluginAction::kScaleBack:
      cap = GPUAAS_CAP_SCALE_TO_ZERO;
      cap_name = "SCALE_TO_ZERO";
      break;
    case PluginAction::kSetScale:
      cap = GPUAAS_CAP_AUTOSCALE;
      cap_name = "AUTOSCALE";
      break;
  }
  if (cap == 0) {
    return Status::invalid(
        fmt::format("plugin {}: unknown action {}", impl_->info.name, static_cast<int>(what)));
  }
  const std::string serialized = request.SerializeAsString();
  auto& api = impl_->api;
  return call<v1::ActionSet>(*impl_, PluginFunction::kAction, cap, cap_name,
                             [&](gpuaas_plugin* p, gpuaas_bytes* out) {
                               return api.action(p, static_cast<gpuaas_action_kind>(what),
                                                 bytes(object_json), bytes(serialized), out);
                             });
}

Result<v1::WorkloadActivity> WorkloadPlugin::activity(std::string_view object_json,
                                                      const v1::MetricBatch& samples) {
  const std::string serialized = samples.SerializeAsString();
  auto& api = impl_->api;
  return call<v1::WorkloadActivity>(*impl_, PluginFunction::kActivity, GPUAAS_CAP_ACTIVITY,
                                    "ACTIVITY", [&](gpuaas_plugin* p, gpuaas_bytes* out) {
                                      return api.activity(p, bytes(object_json), bytes(serialized),
                                                          out);
                                    });
}

}  // namespace gpuaas::host
