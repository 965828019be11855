// Demand of a Pod as Kueue's pod integration computes it: one pod set of one pod with the Pod's
// own resources, the queue and priority class from Kueue's labels, spec.priorityClassName, and
// for a pod of a group the group's name and size. The core gathers a group's pods into one
// workload; each pod only says which group it is in and how many the group has.
#include <algorithm>
#include <array>

#include "pod.hpp"

namespace gpuaas::pod {
namespace {

// Controllers whose pods are never workloads of their own: a DaemonSet's pods run one per node
// whatever the quota (deleting one only has it created again), and the kinds Kueue admits as a
// whole create their pods after admission, so counting the pods too would count twice.
struct Owner {
  const char* group;
  const char* kind;
};
constexpr std::array<Owner, 13> kNotOwnWorkload = {{{"apps", "DaemonSet"},
                                                    {"batch", "Job"},
                                                    {"jobset.x-k8s.io", "JobSet"},
                                                    {"ray.io", "RayCluster"},
                                                    {"ray.io", "RayJob"},
                                                    {"kubeflow.org", "PyTorchJob"},
                                                    {"kubeflow.org", "TFJob"},
                                                    {"kubeflow.org", "MPIJob"},
                                                    {"kubeflow.org", "XGBoostJob"},
                                                    {"kubeflow.org", "PaddleJob"},
                                                    {"kubeflow.org", "JAXJob"},
                                                    {"trainer.kubeflow.org", "TrainJob"},
                                                    {"workload.codeflare.dev", "AppWrapper"}}};

// "<Kind> <name>" of the Pod's controller when it is one of those kinds; "" otherwise.
std::string managing_owner(const Workload& w) {
  const Json* owners = w.find("/metadata/ownerReferences");
  if (owners == nullptr || !owners->is_array()) return "";
  for (const auto& o : *owners) {
    if (!o.is_object() || o.value("controller", false) != true) continue;
    const std::string api = o.value("apiVersion", "");
    const std::size_t slash = api.find('/');
    const std::string group = slash == std::string::npos ? "" : api.substr(0, slash);
    const std::string kind = o.value("kind", "");
    for (const auto& k : kNotOwnWorkload) {
      if (group == k.group && kind == k.kind) return kind + " " + o.value("name", "");
    }
  }
  return "";
}

// The annotation as Kueue's webhook accepts it: a positive decimal integer (int32).
int64_t group_total(const Workload& w) {
  if (!w.has_annotation(kGroupTotalAnnotation)) {
    throw plugin::InvalidInput(std::string(kGroupTotalPointer) + ": missing; a Pod with label " +
                               kGroupNameLabel + " needs the group's size in it");
  }
  const Json& value = w.json()["metadata"]["annotations"][kGroupTotalAnnotation];
  const std::string text = value.is_string() ? value.get<std::string>() : std::string();
  const bool digits =
      !text.empty() && text.size() <= 10 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t n = digits ? std::stoll(text) : 0;
  if (n < 1 || n > INT32_MAX) {
    throw plugin::InvalidInput(std::string(kGroupTotalPointer) + ": want a positive integer, got " +
                               value.dump());
  }
  return n;
}

}  // namespace

v1::WorkloadDemand pod_demand(const Workload& w) {
  if (w.label(plugin::kQueueNameLabel).empty()) {
    throw plugin::NotSupported(std::string("the Pod has no label ") + plugin::kQueueNameLabel +
                               ": not a workload");
  }
  if (const std::string owner = managing_owner(w); !owner.empty()) {
    throw plugin::NotSupported("the Pod belongs to " + owner + ": not a workload of its own");
  }
  v1::WorkloadDemand d = plugin::demand_of(w);
  *d.add_pod_sets() = plugin::pod_set(kPodSetName, 1, w.at(kPodSpec), kPodSpec);
  if (const Json* pc = w.find("/spec/priorityClassName"); pc != nullptr && !pc->is_null()) {
    if (!pc->is_string()) {
      throw plugin::InvalidInput("/spec/priorityClassName: want a string, got " + pc->dump());
    }
    d.set_pod_priority_class(pc->get<std::string>());
  }
  const std::string group = w.label(kGroupNameLabel);
  if (!group.empty()) {
    d.set_group_name(group);
    d.set_group_total(group_total(w));
  } else if (w.has_annotation(kGroupTotalAnnotation)) {
    // As Kueue's webhook: the size means nothing without the group it sizes.
    throw plugin::InvalidInput(std::string(kGroupNamePointer) + ": missing; annotation " +
                               kGroupTotalAnnotation + " is set without it");
  }
  return d;
}

}  // namespace gpuaas::pod
