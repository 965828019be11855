// Admission, suspension and scale-to-zero as merge patches. Every patch carries the
// resourceVersion: admission rewrites the whole workerGroupSpecs list (custom resources take no
// strategic merge), so a concurrent edit of another group would otherwise be lost.
#include "ray.hpp"

namespace gpuaas::ray {
namespace {

using plugin::Guard;
using plugin::Patch;

// The object's spec, which the actions edit; InvalidInput when it is not an object.
Json& spec_of(Json& o) {
  auto it = o.find("spec");
  if (it == o.end() || !it->is_object())
    throw plugin::InvalidInput("/spec: missing or not an object");
  return *it;
}

// Every PodSpec KubeRay will create pods from: head, worker groups, and a RayJob's submitter
// template when it has one (Kueue's default submitter lives in KubeRay, not in the object).
std::vector<std::string> pod_specs(const Workload& w) {
  if (kind_of(w) == Kind::kCluster) return cluster_pod_specs(w, "/spec");
  std::vector<std::string> specs;
  if (std::string base = job_cluster_base(w); !base.empty()) specs = cluster_pod_specs(w, base);
  const std::string submitter = "/spec/submitterPodTemplate/spec";
  if (job_has_submitter_pod(w) && w.find(submitter) != nullptr) specs.push_back(submitter);
  return specs;
}

}  // namespace

Patch admit(const Workload& w, const v1::ActionRequest& r) {
  Json o = w.json();
  plugin::apply_flavor(o, pod_specs(w), r);
  // Only a suspended object is un-suspended: an absent flag stays absent.
  if (w.flag_at("/spec/suspend", false)) spec_of(o)["suspend"] = false;
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch suspend(const Workload& w) {
  kind_of(w);
  Json o = w.json();
  plugin::restore_templates(o);
  spec_of(o)["suspend"] = true;
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch scale_to_zero(const Workload& w) {
  if (kind_of(w) == Kind::kJob) {
    throw plugin::NotSupported("RayJob has no replicas to scale to zero; suspend it instead");
  }
  const auto groups = worker_groups(w, "/spec");
  if (groups.empty()) return {};  // a head-only cluster is already at its floor
  // With the in-tree autoscaler, the Ray autoscaler owns `replicas`: act through its bounds only
  // (KubeRay clamps replicas into [min, max], so max 0 removes every worker) and leave replicas
  // to the autoscaler, so that scaling back does not overwrite a later decision of it.
  const bool by_bounds = autoscaled(w, "/spec");
  std::vector<std::string> pointers;
  for (const auto& g : groups) {
    pointers.push_back(g.pointer + (by_bounds ? "/maxReplicas" : "/replicas"));
    pointers.push_back(g.pointer + "/minReplicas");
  }
  Json o = w.json();
  plugin::scale_to(o, pointers, 0);
  return Patch::between(w, o, Guard::kResourceVersion);
}

Patch scale_back(const Workload& w) {
  if (kind_of(w) == Kind::kJob) {
    throw plugin::NotSupported("RayJob has no replicas to scale back");
  }
  Json o = w.json();
  if (!plugin::scale_back(o)) return {};
  return Patch::between(w, o, Guard::kResourceVersion);
}

}  // namespace gpuaas::ray
