// The C ABI behind GPUAAS_PLUGIN: every boundary function is noexcept and turns exceptions into
// return codes and messages. Included by plugin.hpp (after the traits), never on its own.
#pragma once

#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

#include "gpuaas/plugin/abi.h"
#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/kind.hpp"
#include "gpuaas/plugin/patch.hpp"
#include "gpuaas/plugin/samples.hpp"
#include "gpuaas/plugin/workload.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin::detail {

// Parses object JSON; InvalidInput names what is wrong and where.
Json parse_object(gpuaas_bytes object);
// Parses the plugin's configuration (empty: {}); InvalidInput when it is not a JSON object.
Json parse_config(gpuaas_bytes config);
// Wraps a patch as the Action the host publishes (target: the object; MERGE_PATCH, or DELETE
// without a body for Patch::remove()).
v1::ActionSet to_action_set(const Workload& w, Patch patch, const v1::ActionRequest& request);
// Runs `body`, mapping exceptions to return codes; the reply or the message goes to `buffer`.
template <typename F>
gpuaas_rc guarded(std::string& buffer, gpuaas_bytes* out, F&& body) noexcept {
  gpuaas_rc rc = GPUAAS_RC_OK;
  try {
    buffer.clear();
    body(buffer);
  } catch (const InvalidInput& e) {
    rc = GPUAAS_RC_INVALID_INPUT;
    buffer = e.what();
  } catch (const NotSupported& e) {
    rc = GPUAAS_RC_NOT_SUPPORTED;
    buffer = e.what();
  } catch (const std::exception& e) {
    rc = GPUAAS_RC_INTERNAL;
    try {
      buffer = e.what();
    } catch (...) {
      buffer.clear();
    }
  } catch (...) {
    rc = GPUAAS_RC_INTERNAL;
    buffer = "unknown exception";
  }
  if (out != nullptr) *out = gpuaas_bytes{buffer.data(), buffer.size()};
  return rc;
}
// The message of the last failed create() on this thread.
std::string& create_error();

// "RayJob" -> "rayjobs": the plural of a kind that declares none.
inline std::string default_plural(std::string_view kind) {
  std::string out(kind);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out + "s";
}

// A kind's declaration as the ABI carries it (plural as declared, maybe nullptr).
constexpr gpuaas_kind_info kind_info(const Kind& k) {
  gpuaas_kind_info info{};
  info.struct_size = sizeof(gpuaas_kind_info);
  info.scope = k.scope == Scope::kCluster ? GPUAAS_SCOPE_CLUSTER : GPUAAS_SCOPE_NAMESPACED;
  info.plural = k.plural;
  switch (k.hold.type) {
    case Hold::Type::kNone:
      info.hold = GPUAAS_HOLD_NONE;
      break;
    case Hold::Type::kSetTrue:
      info.hold = GPUAAS_HOLD_SET_TRUE;
      break;
    case Hold::Type::kAnnotation:
      info.hold = GPUAAS_HOLD_ANNOTATION;
      break;
    case Hold::Type::kSchedulingGate:
      info.hold = GPUAAS_HOLD_SCHEDULING_GATE;
      break;
  }
  info.hold_target = k.hold.target;
  info.hold_value = k.hold.value;
  info.pods = k.pods.label == nullptr ? GPUAAS_PODS_BY_OWNER : GPUAAS_PODS_BY_LABEL;
  info.pod_label = k.pods.label;
  info.flags = (k.session ? GPUAAS_KIND_SESSION : 0) |
               (k.queued_only ? GPUAAS_KIND_QUEUED_ONLY : 0) |
               (k.hold.any_value ? GPUAAS_KIND_HOLD_ANY_VALUE : 0);
  switch (k.binding) {
    case Binding::kDefault:
      info.binding = GPUAAS_BINDING_DEFAULT;
      break;
    case Binding::kRequired:
      info.binding = GPUAAS_BINDING_REQUIRED;
      break;
    case Binding::kPreferred:
      info.binding = GPUAAS_BINDING_PREFERRED;
      break;
    case Binding::kOff:
      info.binding = GPUAAS_BINDING_OFF;
      break;
  }
  return info;
}

template <typename T>
class Adapter {
  static_assert(check<T>());

  // One instance: the author's object and one reply buffer per function (a reply stays valid
  // until the next call of the same function on the same instance).
  struct Instance {
    T impl;
    std::string demand, lifecycle, action, activity;
    template <typename... A>
    explicit Instance(A&&... a) : impl(std::forward<A>(a)...) {}
  };
  static Instance& self(gpuaas_plugin* p) { return *reinterpret_cast<Instance*>(p); }

  static gpuaas_rc create(gpuaas_bytes config, gpuaas_plugin** out, gpuaas_bytes* error) noexcept {
    *out = nullptr;
    return guarded(create_error(), error, [&](std::string&) {
      if constexpr (std::is_constructible_v<T, const Json&>) {
        *out = reinterpret_cast<gpuaas_plugin*>(new Instance(parse_config(config)));
      } else {
        *out = reinterpret_cast<gpuaas_plugin*>(new Instance());
      }
    });
  }
  static void destroy(gpuaas_plugin* p) noexcept { delete reinterpret_cast<Instance*>(p); }

  static gpuaas_rc demand(gpuaas_plugin* p, gpuaas_bytes object, gpuaas_bytes* out) noexcept {
    Instance& in = self(p);
    return guarded(in.demand, out, [&](std::string& buf) {
      Json j = parse_object(object);
      Workload w(j);
      v1::WorkloadDemand d = in.impl.demand(w);
      d.SerializeToString(&buf);
    });
  }
  static gpuaas_rc lifecycle(gpuaas_plugin* p, gpuaas_bytes object, gpuaas_bytes* out) noexcept {
    Instance& in = self(p);
    return guarded(in.lifecycle, out, [&](std::string& buf) {
      Json j = parse_object(object);
      Workload w(j);
      v1::WorkloadLifecycle l = in.impl.lifecycle(w);
      l.SerializeToString(&buf);
    });
  }
  static gpuaas_rc action(gpuaas_plugin* p, gpuaas_action_kind kind, gpuaas_bytes object,
                          gpuaas_bytes request, gpuaas_bytes* out) noexcept {
    Instance& in = self(p);
    return guarded(in.action, out, [&](std::string& buf) {
      v1::ActionRequest req;
      if (!req.ParseFromArray(request.data, static_cast<int>(request.size))) {
        throw InvalidInput("action request: not a gpuaas.v1.ActionRequest");
      }
      Json j = parse_object(object);
      Workload w(j);
      Patch patch = run_action(in.impl, kind, w, req);
      to_action_set(w, std::move(patch), req).SerializeToString(&buf);
    });
  }
  static Patch run_action(T& impl, gpuaas_action_kind kind, const Workload& w,
                          const v1::ActionRequest& req) {
    if constexpr (HasAdmit<T>) {
      if (kind == GPUAAS_ACTION_ADMIT) return impl.admit(w, req);
      if (kind == GPUAAS_ACTION_SUSPEND) return impl.suspend(w, req);
    }
    if constexpr (HasScaleToZero<T>) {
      if (kind == GPUAAS_ACTION_SCALE_TO_ZERO) return impl.scale_to_zero(w, req);
      if (kind == GPUAAS_ACTION_SCALE_BACK) return impl.scale_back(w, req);
    }
    if constexpr (HasSetScale<T>) {
      if (kind == GPUAAS_ACTION_SET_SCALE) return impl.set_scale(w, req);
    }
    throw NotSupported(std::string(T::info.name) + " does not offer action " +
                       std::to_string(kind) + " for " + w.kind());
  }
  static gpuaas_rc activity(gpuaas_plugin* p, gpuaas_bytes object, gpuaas_bytes samples,
                            gpuaas_bytes* out) noexcept {
    Instance& in = self(p);
    return guarded(in.activity, out, [&](std::string& buf) {
      v1::MetricBatch batch;
      if (!batch.ParseFromArray(samples.data, static_cast<int>(samples.size))) {
        throw InvalidInput("samples: not a gpuaas.v1.MetricBatch");
      }
      Json j = parse_object(object);
      Workload w(j);
      if constexpr (HasActivity<T>) {
        in.impl.activity(w, Samples(batch)).SerializeToString(&buf);
      }
    });
  }

  static constexpr gpuaas_plugin_api kApi = [] {
    gpuaas_plugin_api api{};
    api.struct_size = sizeof(gpuaas_plugin_api);
    api.create = &create;
    api.destroy = &destroy;
    api.demand = &demand;
    if constexpr (HasLifecycle<T>) api.lifecycle = &lifecycle;
    if constexpr (HasAdmit<T> || HasScaleToZero<T>) api.action = &action;
    if constexpr (HasActivity<T>) api.activity = &activity;
    return api;
  }();

 public:
  static const gpuaas_plugin_descriptor* descriptor() noexcept {
    static gpuaas_kind kinds[std::size(T::kinds)];
    static gpuaas_kind_info infos[std::size(T::kinds)];
    static std::string plurals[std::size(T::kinds)];
    static const gpuaas_plugin_descriptor d = [] {
      for (std::size_t i = 0; i < std::size(T::kinds); ++i) {
        const Kind& k = T::kinds[i];
        kinds[i] = gpuaas_kind{k.group, k.version, k.kind};
        infos[i] = kind_info(k);
        if (k.plural == nullptr) {
          plurals[i] = default_plural(k.kind);
          infos[i].plural = plurals[i].c_str();
        }
      }
      gpuaas_plugin_descriptor desc{};
      desc.struct_size = sizeof(gpuaas_plugin_descriptor);
      desc.abi_major = GPUAAS_PLUGIN_ABI_MAJOR;
      desc.abi_minor = GPUAAS_PLUGIN_ABI_MINOR;
      desc.name = T::info.name;
      desc.version = T::info.version;
      desc.kinds = kinds;
      desc.kind_count = static_cast<uint32_t>(std::size(T::kinds));
      desc.capabilities = capabilities<T>();
      desc.event_schema = GPUAAS_PLUGIN_EVENT_SCHEMA;
      desc.status = T::info.status == Stability::kStable ? GPUAAS_PLUGIN_STATUS_STABLE
                                                         : GPUAAS_PLUGIN_STATUS_ALPHA;
      desc.api = &kApi;
      desc.kind_info = infos;
      desc.kind_info_size = sizeof(gpuaas_kind_info);
      return desc;
    }();
    return &d;
  }
};

}  // namespace gpuaas::plugin::detail
