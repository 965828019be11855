// A workload plugin for the host's tests, written straight against the C ABI. Compiled many times
// (tests/host/CMakeLists.txt), each with TP_* definitions that make it good or broken.
//   demand(): object JSON containing "boom" -> INTERNAL, "bad" -> INVALID_INPUT,
//             "unsupported" -> NOT_SUPPORTED, "garbage" -> OK with bytes that are not protobuf.
#include <cstddef>
#include <string>
#include <string_view>

#include "gpuaas/plugin/abi.h"
#include "gpuaas/v1/event.pb.h"
#include "gpuaas/v1/plugin.pb.h"

#ifndef TP_NAME
#define TP_NAME "example"
#endif
#ifndef TP_VERSION
#define TP_VERSION "1.2.0"
#endif
#ifndef TP_ABI_MAJOR
#define TP_ABI_MAJOR GPUAAS_PLUGIN_ABI_MAJOR
#endif
#ifndef TP_ABI_MINOR
#define TP_ABI_MINOR GPUAAS_PLUGIN_ABI_MINOR
#endif
#ifndef TP_SCHEMA
#define TP_SCHEMA GPUAAS_PLUGIN_EVENT_SCHEMA
#endif
#ifndef TP_KIND
#define TP_KIND "Widget"
#endif
#ifndef TP_GROUP
#define TP_GROUP "example.com"
#endif
#ifndef TP_PLURAL
#define TP_PLURAL "widgets"
#endif
#ifndef TP_HOLD
#define TP_HOLD GPUAAS_HOLD_SET_TRUE
#endif
#ifndef TP_HOLD_TARGET
#define TP_HOLD_TARGET "/spec/suspend"
#endif
#ifndef TP_BINDING
#define TP_BINDING GPUAAS_BINDING_PREFERRED
#endif

namespace {

struct Instance {
  std::string config;
  std::string out;  // the reply of the last call (the ABI: valid until the next call)
};

gpuaas_rc reply(Instance* self, const google::protobuf::MessageLite& m, gpuaas_bytes* out) {
  self->out = m.SerializeAsString();
  *out = {self->out.data(), self->out.size()};
  return GPUAAS_RC_OK;
}

gpuaas_rc fail(Instance* self, gpuaas_rc rc, std::string message, gpuaas_bytes* out) {
  self->out = std::move(message);
  *out = {self->out.data(), self->out.size()};
  return rc;
}

std::string_view view(gpuaas_bytes b) { return {b.data, b.size}; }
bool contains(gpuaas_bytes b, std::string_view what) {
  return view(b).find(what) != std::string_view::npos;
}

gpuaas_rc create(gpuaas_bytes config, gpuaas_plugin** out, gpuaas_bytes* error) {
#ifdef TP_CREATE_FAILS
  (void)config;
  static const char kMessage[] = "widget controller config is broken";
  *out = nullptr;
  *error = {kMessage, sizeof(kMessage) - 1};
  return GPUAAS_RC_INTERNAL;
#else
  (void)error;
  auto* self = new Instance{std::string(view(config)), {}};
  *out = reinterpret_cast<gpuaas_plugin*>(self);
  return GPUAAS_RC_OK;
#endif
}

void destroy(gpuaas_plugin* plugin) { delete reinterpret_cast<Instance*>(plugin); }

gpuaas_rc demand(gpuaas_plugin* plugin, gpuaas_bytes object, gpuaas_bytes* out) {
  auto* self = reinterpret_cast<Instance*>(plugin);
  if (contains(object, "boom")) return fail(self, GPUAAS_RC_INTERNAL, "widget exploded", out);
  if (contains(object, "bad")) return fail(self, GPUAAS_RC_INVALID_INPUT, "no spec.size", out);
  if (contains(object, "unsupported")) {
    return fail(self, GPUAAS_RC_NOT_SUPPORTED, "widgets of this shape are not handled", out);
  }
  if (contains(object, "garbage")) {
    return fail(self, GPUAAS_RC_OK, std::string(12, '\xff'), out);
  }
  gpuaas::v1::WorkloadDemand d;
  auto* set = d.add_pod_sets();
  set->set_name("workers");
  set->set_count(2);
  auto* gpu = set->add_per_pod();
  gpu->set_name("nvidia.com/gpu");
  gpu->set_milli(1000);
  d.set_queue_name(self->config);
  return reply(self, d, out);
}

gpuaas_rc lifecycle(gpuaas_plugin* plugin, gpuaas_bytes object, gpuaas_bytes* out) {
  gpuaas::v1::WorkloadLifecycle l;
  l.set_state(contains(object, "done") ? gpuaas::v1::WorkloadLifecycle::SUCCEEDED
                                       : gpuaas::v1::WorkloadLifecycle::RUNNING);
  l.set_reason("widget is turning");
  return reply(reinterpret_cast<Instance*>(plugin), l, out);
}

gpuaas_rc action(gpuaas_plugin* plugin, gpuaas_action_kind kind, gpuaas_bytes object,
                 gpuaas_bytes request, gpuaas_bytes* out) {
  auto* self = reinterpret_cast<Instance*>(plugin);
  (void)object;
  gpuaas::v1::ActionRequest r;
  if (!r.ParseFromArray(request.data, static_cast<int>(request.size))) {
    return fail(self, GPUAAS_RC_INTERNAL, "request is not an ActionRequest", out);
  }
  gpuaas::v1::ActionSet set;
  auto* a = set.add_actions();
  a->set_operation(gpuaas::v1::Action::MERGE_PATCH);
  a->set_body_json(kind == GPUAAS_ACTION_SUSPEND ? R"({"spec":{"suspend":true}})"
                                                 : R"({"spec":{"suspend":false}})");
  a->set_reason(r.reason() + " flavor=" + r.flavor() + " kind=" + std::to_string(kind));
  return reply(self, set, out);
}

[[maybe_unused]] gpuaas_rc activity(gpuaas_plugin* plugin, gpuaas_bytes object,
                                    gpuaas_bytes samples, gpuaas_bytes* out) {
  auto* self = reinterpret_cast<Instance*>(plugin);
  (void)object;
  gpuaas::v1::MetricBatch batch;
  if (!batch.ParseFromArray(samples.data, static_cast<int>(samples.size))) {
    return fail(self, GPUAAS_RC_INTERNAL, "samples are not a MetricBatch", out);
  }
  gpuaas::v1::WorkloadActivity a;
  a.set_level(batch.samples_size() == 0 ? gpuaas::v1::WorkloadActivity::IDLE
                                        : gpuaas::v1::WorkloadActivity::ACTIVE);
  a.set_evidence(std::to_string(batch.samples_size()) + " samples");
  return reply(self, a, out);
}

constexpr gpuaas_kind kKinds[] = {{TP_GROUP, "v1", TP_KIND}};

#ifdef TP_KIND_INFO_1_1
// Built against ABI 1.1: each entry ends at `flags`. The binding beyond it is garbage a host must
// not read.
constexpr uint32_t kKindInfoSize = offsetof(gpuaas_kind_info, flags) + sizeof(uint64_t);
#else
constexpr uint32_t kKindInfoSize = sizeof(gpuaas_kind_info);
#endif

// ABI 1.1 (binding: 1.2): what the kind is besides its name. TP_* break one field at a time.
constexpr gpuaas_kind_info kKindInfo[] = {
    {kKindInfoSize, GPUAAS_SCOPE_NAMESPACED, TP_PLURAL, TP_HOLD, GPUAAS_PODS_BY_LABEL,
     TP_HOLD_TARGET, nullptr, "example.com/widget", GPUAAS_KIND_QUEUED_ONLY, TP_BINDING}};

#ifdef TP_OLD_API
// An older plugin: its table ends before activity(), and it does not declare ACTIVITY. The
// pointer is still set in memory, so a host that read past struct_size would see it.
constexpr uint32_t kApiSize = offsetof(gpuaas_plugin_api, activity);
constexpr uint64_t kCaps =
    GPUAAS_CAP_DEMAND | GPUAAS_CAP_LIFECYCLE | GPUAAS_CAP_ADMISSION | GPUAAS_CAP_SCALE_TO_ZERO;
#else
constexpr uint32_t kApiSize = sizeof(gpuaas_plugin_api);
#ifdef TP_CAPS
constexpr uint64_t kCaps = TP_CAPS;
#else
constexpr uint64_t kCaps = GPUAAS_CAP_DEMAND | GPUAAS_CAP_LIFECYCLE | GPUAAS_CAP_ADMISSION |
                           GPUAAS_CAP_SCALE_TO_ZERO | GPUAAS_CAP_ACTIVITY;
#endif
#endif

#ifdef TP_HALF_CAP
// Declares ACTIVITY but leaves activity() NULL.
constexpr gpuaas_plugin_api kApi = {kApiSize, create, destroy, demand, lifecycle, action, nullptr};
#else
constexpr gpuaas_plugin_api kApi = {kApiSize, create, destroy, demand, lifecycle, action, activity};
#endif

#ifdef TP_ABI_1_0
// Built against ABI 1.0: the descriptor ends at `api`, so the host must not read kind_info.
constexpr uint32_t kDescriptorSize = offsetof(gpuaas_plugin_descriptor, kind_info);
constexpr uint32_t kAbiMinor = 0;
#elif defined(TP_KIND_INFO_1_1)
constexpr uint32_t kDescriptorSize = sizeof(gpuaas_plugin_descriptor);
constexpr uint32_t kAbiMinor = 1;
#else
constexpr uint32_t kDescriptorSize = sizeof(gpuaas_plugin_descriptor);
constexpr uint32_t kAbiMinor = TP_ABI_MINOR;
#endif

constexpr gpuaas_plugin_descriptor kDescriptor = {kDescriptorSize,
                                                  TP_ABI_MAJOR,
                                                  kAbiMinor,
                                                  TP_NAME,
                                                  TP_VERSION,
                                                  kKinds,
                                                  1,
                                                  kCaps,
                                                  TP_SCHEMA,
                                                  GPUAAS_PLUGIN_STATUS_ALPHA,
                                                  &kApi,
                                                  kKindInfo,
                                                  sizeof(gpuaas_kind_info)};

}  // namespace

static_assert(std::string_view(GPUAAS_PLUGIN_ENTRY_POINT) == "gpuaas_plugin_get_descriptor",
              "the entry point below must carry the ABI's name");

#ifndef TP_NO_ENTRY
extern "C" GPUAAS_PLUGIN_EXPORT const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor() {
  return &kDescriptor;
}
#endif
