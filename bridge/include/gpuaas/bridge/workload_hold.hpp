// Which workloads the admission webhook holds on creation, and the JSON Patch (RFC 6902) that
// holds one. Pure: no I/O, so every rule is tested without a server.
//
// As Kueue's webhook does, a new object that carries the queue label is held until gpuaas admits
// it. How a kind is held is data (a HoldRule per API group and kind), not a code path per kind:
// the plugins declare it for their kinds (plugin_kinds.hpp turns their kind info into rules, so a
// kind held here is one some plugin releases), and the configuration's `webhook.holds:` list
// adds or replaces rules per (apiGroup, kind). docs/bridge-webhook.md lists what the plugins in
// this repository declare.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace YAML {
class Node;
}

namespace gpuaas::bridge {

struct HoldRule {
  enum class Action {
    kSetTrue,         // `path` (a JSON pointer) set to true; missing parents are created
    kAnnotation,      // metadata.annotations[key] = value
    kSchedulingGate,  // {"name": name} appended to spec.schedulingGates
    kNone,            // configuration only: removes the default rule of this kind
  };
  std::string api_group;  // "" = the core group (Pod); matched with any version
  std::string kind;
  Action action = Action::kNone;
  std::string path;  // kSetTrue
  std::string key;   // kAnnotation
  std::string value;
  // kAnnotation: the annotation present with any value already holds the object (the notebook
  // controller reads presence); otherwise only `value` (case-insensitive) does.
  bool any_value = false;
  std::string name;  // kSchedulingGate

  static HoldRule set_true(std::string group, std::string kind, std::string path);
  static HoldRule annotation(std::string group, std::string kind, std::string key,
                             std::string value, bool any_value);
  static HoldRule scheduling_gate(std::string group, std::string kind, std::string name);
};

inline constexpr const char* kDefaultQueueLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kAdmissionGate = "kueue.x-k8s.io/admission";

std::vector<HoldRule> default_hold_rules();

// The `webhook.holds:` list:
//   - {apiGroup: batch, kind: Job, action: setTrue, path: /spec/suspend}
//   - {apiGroup: kubeflow.org, kind: Notebook, action: annotation,
//      key: kubeflow-resource-stopped, value: "1970-01-01T00:00:00Z", anyValue: true}
//   - {apiGroup: "", kind: Pod, action: schedulingGate, name: kueue.x-k8s.io/admission}
//   - {apiGroup: example.com, kind: Foo, action: none}
// Unknown keys, missing fields and bad pointers are errors naming FILE:LINE:COLUMN (`file` is the
// configuration's path, for the message). A null node is an empty list.
Result<std::vector<HoldRule>> parse_hold_rules(const YAML::Node& node, const std::string& file);

// `base` with each of `overrides` replacing (or adding) the rule of its (apiGroup, kind); a kNone
// override removes it.
std::vector<HoldRule> with_overrides(std::vector<HoldRule> base,
                                     const std::vector<HoldRule>& overrides);

// The rule for a kind; "ray.io/v1" and "v1" style apiVersions are both understood by the caller
// passing only the group. nullptr if none.
const HoldRule* find_hold_rule(const std::vector<HoldRule>& rules, std::string_view api_group,
                               std::string_view kind);

// The group of an apiVersion: "batch/v1" -> "batch", "v1" -> "".
std::string_view api_group_of(std::string_view api_version);

// RFC 6901 escaping of one reference token: "~" -> "~0", "/" -> "~1".
std::string escape_pointer_token(std::string_view token);

// The RFC 6902 operations that hold `object` by `rule`, written against the object as it is
// (missing parents added whole, arrays appended with "/-"). An empty array: already held.
// Errors (invalid) when the object's shape makes the rule impossible (a parent that is not an
// object, schedulingGates that is not an array).
Result<nlohmann::json> hold_patch(const nlohmann::json& object, const HoldRule& rule);

// What the webhook does with one admission request.
struct HoldDecision {
  bool held = false;      // `patch` holds the workload
  bool labelled = false;  // `patch` copies the queue labels into a pod template (not a hold)
  nlohmann::json patch;   // RFC 6902 operations (held or labelled only)
  std::string reason;     // why it passed, or what was held, for logs and tests
  std::string warning;    // the object could not be held (returned to the client as a warning)
  // A queued CREATE of a workload of its own (no controller of a held kind, not a DaemonSet's):
  // its pod templates may be gated (placement_gates.hpp), whether a rule holds it or not.
  bool workload = false;
};

// operation: the AdmissionRequest's ("CREATE", "UPDATE", ...); group/kind: the request's kind.
// Passes (no patch) unless a CREATE of an object with the queue label (non-empty), with a rule
// for its kind, not already held, and whose controller (ownerReferences[].controller) is not
// itself of a held kind: a RayJob's RayCluster and a Job's Pods inherit the label but their
// owner was held and admitted already (Kueue skips them the same way). A DaemonSet's pods and
// pods with spec.nodeName set are never held.
// A Deployment or StatefulSet (apps) with the label is not held but labelled, on CREATE and
// UPDATE, as Kueue's pod integration does: the queue label (and kueue.x-k8s.io/priority-class)
// is copied into spec.template.metadata.labels, and a StatefulSet's pods are made one group
// (label kueue.x-k8s.io/pod-group-name "statefulset-<name>", annotation
// kueue.x-k8s.io/pod-group-total-count spec.replicas, 1 by default). Their pods have no rule
// for their owner (a ReplicaSet or the StatefulSet), so each is gated when it is created.
HoldDecision decide_hold(const nlohmann::json& object, std::string_view operation,
                         std::string_view api_group, std::string_view kind,
                         std::string_view queue_label, const std::vector<HoldRule>& rules);

}  // namespace gpuaas::bridge
