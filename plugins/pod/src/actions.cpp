// Admission as Kueue does it for a plain Pod: while the Pod is gated, Kubernetes lets
// spec.nodeSelector gain keys and spec.tolerations gain entries, and lets a gate go; so ADMIT
// merges the flavor in and removes kueue.x-k8s.io/admission in one patch. A merge patch replaces
// a list whole, so the patch carries the remaining gates (or null when none remain) and the
// resourceVersion: a gate another controller added meanwhile must not be dropped.
// Once the gate is gone, nodeSelector is frozen and no gate can come back, so a Pod is stopped
// by deleting it, as Kueue does; its controller (if any) makes a new, gated one.
#include <array>

#include "pod.hpp"

namespace gpuaas::pod {
namespace {

const std::array<std::string, 1> kPodSpecs = {kPodSpec};

// The spec's nodeSelector as an object ({} when absent); InvalidInput when it is not one.
Json node_selector(const Json& object) {
  const auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object())
    throw plugin::InvalidInput("/spec: not an object");
  const auto sel = spec->find("nodeSelector");
  if (sel == spec->end() || sel->is_null()) return Json::object();
  if (!sel->is_object()) throw plugin::InvalidInput("/spec/nodeSelector: not an object");
  return *sel;
}

// Kubernetes adds keys to a gated Pod's nodeSelector but changes or removes none: the first key
// the flavor would change, as a message; "" when it only adds.
std::string selector_conflict(const Json& before, const Json& after, const std::string& flavor) {
  for (const auto& [key, value] : before.items()) {
    auto it = after.find(key);
    if (it == after.end() || *it != value) {
      return "/spec/nodeSelector/" + plugin::pointer_token(key) + ": the Pod asks for " +
             value.dump() + ", flavor \"" + flavor + "\" for " +
             (it == after.end() ? std::string("none") : it->dump()) +
             "; Kubernetes only adds to a gated Pod's nodeSelector";
    }
  }
  return "";
}

bool finished(const Workload& w) {
  const Json* p = w.find("/status/phase");
  return p != nullptr && (*p == "Succeeded" || *p == "Failed");
}

}  // namespace

plugin::Patch pod_admit(const Workload& w, const v1::ActionRequest& request) {
  const Json gates = scheduling_gates(w);
  const Json before = node_selector(w.json());
  Json o = w.json();
  plugin::apply_flavor(o, kPodSpecs, request);
  const Json after = node_selector(o);
  if (!gated(w)) {
    // Released already (an earlier ADMIT whose outcome came back late, or a Pod no webhook
    // held): nothing more to do unless the flavor needs a node selector the Pod cannot take.
    if (after != before) {
      throw plugin::InvalidInput(std::string(kGates) + ": the Pod is not gated by " +
                                 kAdmissionGate +
                                 ", so Kubernetes keeps spec.nodeSelector as it "
                                 "is (flavor \"" +
                                 w.annotation(plugin::kFlavorAnnotation) + "\"); flavor \"" +
                                 request.flavor() + "\" would change it");
    }
    return {};
  }
  if (const std::string conflict = selector_conflict(before, after, request.flavor());
      !conflict.empty()) {
    throw plugin::InvalidInput(conflict);
  }
  Json remaining = Json::array();
  for (const auto& g : gates) {
    if (g["name"] != kAdmissionGate) remaining.push_back(g);
  }
  if (remaining.empty()) {
    o["spec"].erase("schedulingGates");  // null in the patch: the list goes
  } else {
    o["spec"]["schedulingGates"] = std::move(remaining);
  }
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

plugin::Patch pod_suspend(const Workload& w) {
  // Still gated: never released, nothing runs. Finished or already being deleted: nothing holds
  // a node for long, and deleting a finished Pod would only lose its logs.
  if (gated(w) || finished(w)) return {};
  if (const Json* d = w.find("/metadata/deletionTimestamp"); d != nullptr && !d->is_null()) {
    return {};
  }
  return plugin::Patch::remove();
}

}  // namespace gpuaas::pod
