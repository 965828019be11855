// One instance of a workload plugin, loaded by PluginHost (plugin_host.hpp), called through the
// plain-C plugin ABI (sdk/include/gpuaas/plugin/abi.h). Results come back as gpuaas.v1 messages
// (sdk/proto/gpuaas/v1/plugin.proto), errors as Status:
//   GPUAAS_RC_INVALID_INPUT -> invalid      (the object's fault; never disables the plugin)
//   GPUAAS_RC_NOT_SUPPORTED -> not_found    (also: the capability is not declared; not called)
//   GPUAAS_RC_INTERNAL      -> internal     (also: a reply that does not parse, an unknown rc)
//   disabled                -> unavailable  (after max_consecutive_failures internal failures)
// Every message starts with "plugin NAME". Calls on one instance are serialized by a mutex
// inside, as the ABI promises plugins; all methods are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/v1/event.pb.h"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::host {

// What action() is asked for; the values are GPUAAS_ACTION_*.
enum class PluginAction {
  kAdmit = 1,
  kSuspend = 2,
  kScaleToZero = 3,
  kScaleBack = 4,
  kSetScale = 5
};
std::string_view plugin_action_name(PluginAction action);

// Capabilities (GPUAAS_CAP_*), for WorkloadPlugin::has() without including the C header.
inline constexpr uint64_t kPluginCapDemand = 1ull << 0;       // demand()
inline constexpr uint64_t kPluginCapLifecycle = 1ull << 1;    // lifecycle()
inline constexpr uint64_t kPluginCapAdmission = 1ull << 2;    // action(): admit, suspend
inline constexpr uint64_t kPluginCapScaleToZero = 1ull << 3;  // action(): scale to zero and back
inline constexpr uint64_t kPluginCapActivity = 1ull << 4;     // activity()
inline constexpr uint64_t kPluginCapAutoscale = 1ull << 5;    // action(): set scale (ABI 1.3)

// The label that puts an object in a queue; a queued-only kind's objects without it are not
// workloads (GPUAAS_QUEUE_LABEL).
inline constexpr std::string_view kQueueLabel = "kueue.x-k8s.io/queue-name";

// How a new object of a kind is held until gpuaas admits it (the ABI's GPUAAS_HOLD_*).
struct KindHold {
  enum class Type { kNone, kSetTrue, kAnnotation, kSchedulingGate };
  Type type = Type::kNone;
  std::string target;      // kSetTrue: a JSON pointer; kAnnotation: the key; gate: its name
  std::string value;       // kAnnotation: the value written
  bool any_value = false;  // kAnnotation: the key with any value already holds the object
  auto operator<=>(const KindHold&) const = default;
};
std::string_view hold_type_name(KindHold::Type type);  // "none", "setTrue", ...

// How firmly a kind's pods are bound to the nodes gpuaas places them on (the ABI's
// GPUAAS_BINDING_*), resolved: a kind that declares none (or a plugin older than ABI 1.2) gets
// kPreferred when it is a session, else kRequired. kRequired: every pod template its demand names
// is gated by the bridge's webhook until gpuaasd opens each pod on its node.
enum class KindBinding { kRequired, kPreferred, kOff };
std::string_view binding_name(KindBinding binding);  // "required", "preferred", "off"

// A kind a plugin handles, e.g. {"ray.io", "v1", "RayCluster"}; group is empty for core kinds.
// Besides its name: what its gpuaas_kind_info says (ABI 1.1, binding 1.2), or for a plugin built
// against 1.0 what gpuaas had built in for the kind (host/src/kind_defaults.cpp).
struct PluginKind {
  std::string group;
  std::string version;
  std::string kind;
  std::string plural;  // "rayclusters"
  bool namespaced = true;
  KindHold hold;
  std::string pod_label;     // the pods carry it with the object's name; "" = by owner chain
  bool session = false;      // an interactive session: NotebookPolicy applies
  bool queued_only = false;  // only objects with the queue label are workloads
  KindBinding binding = KindBinding::kRequired;
  bool declared = false;  // by the plugin (1.1); false: the host's 1.0 defaults

  // "group/version", or "version" when the group is empty: the object's apiVersion.
  std::string api_version() const;
  // The same group, version and kind (what a plugin claims; the rest describes it).
  bool same(const PluginKind& other) const {
    return group == other.group && version == other.version && kind == other.kind;
  }
  auto operator<=>(const PluginKind&) const = default;
};

struct PluginInfo {
  std::string name;
  std::string version;       // semver
  std::string status;        // "stable" or "alpha"
  std::string event_schema;  // "gpuaas.v1"
  std::string path;          // the library file, as given to PluginHost::load
  std::vector<PluginKind> kinds;
  uint64_t capabilities = 0;  // kPluginCap* bits
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  bool disabled = false;
  std::string disabled_reason;
  uint64_t calls = 0;   // calls that reached the plugin
  uint64_t errors = 0;  // of those, the ones that did not return a result
};

class WorkloadPlugin {
 public:
  struct Impl;  // host/src/workload_plugin_impl.hpp; only PluginHost makes one
  explicit WorkloadPlugin(std::unique_ptr<Impl> impl);
  // Destroys the instance (api->destroy) while its library is still loaded.
  ~WorkloadPlugin();
  WorkloadPlugin(const WorkloadPlugin&) = delete;
  WorkloadPlugin& operator=(const WorkloadPlugin&) = delete;

  const std::string& name() const;
  PluginInfo info() const;  // a snapshot
  bool handles(std::string_view api_version, std::string_view kind) const;
  // The declaration of that kind, or nullptr when the plugin does not handle it.
  const PluginKind* kind_of(std::string_view api_version, std::string_view kind) const;
  bool has(uint64_t capability) const;  // every bit of `capability` declared
  bool disabled() const;

  // Object JSON (as `kubectl get -o json` prints it) -> what it asks for.
  Result<v1::WorkloadDemand> demand(std::string_view object_json);
  Result<v1::WorkloadLifecycle> lifecycle(std::string_view object_json);
  // kAdmit and kSuspend need kPluginCapAdmission; kScaleToZero and kScaleBack
  // kPluginCapScaleToZero; kSetScale kPluginCapAutoscale.
  Result<v1::ActionSet> action(PluginAction what, std::string_view object_json,
                               const v1::ActionRequest& request);
  Result<v1::WorkloadActivity> activity(std::string_view object_json,
                                        const v1::MetricBatch& samples);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::host
