// A RayClusterSpec as KubeRay reads it: the head pod, worker groups with their CRD defaults and
// the clamping KubeRay applies, and the autoscaler container KubeRay adds to the head pod.
#include <algorithm>
#include <cstdint>
#include <set>

#include "ray.hpp"

namespace gpuaas::ray {
namespace {

constexpr int64_t kInt32Max = 2147483647;

// KubeRay's default for autoscalerOptions.resources: 500m CPU and 512Mi memory, request and limit.
Json default_autoscaler_resources() {
  Json amounts = {{"cpu", "500m"}, {"memory", "512Mi"}};
  return {{"requests", amounts}, {"limits", amounts}};
}

// The head PodSpec as the pod will run: with enableInTreeAutoscaling KubeRay injects the Ray
// autoscaler as a second container, which the quota must count (Kueue's own integration does not).
Json head_pod_spec(const Workload& w, const std::string& base) {
  const std::string at = base + "/headGroupSpec/template/spec";
  Json spec = w.at(at);
  if (!spec.is_object()) throw plugin::InvalidInput(at + ": not an object");
  if (!autoscaled(w, base)) return spec;
  auto containers = spec.find("containers");
  if (containers == spec.end() || !containers->is_array()) return spec;  // pod_set reports it
  for (const auto& c : *containers) {
    if (c.is_object() && c.value("name", "") == "autoscaler") return spec;  // already there
  }
  Json resources = default_autoscaler_resources();
  if (const Json* r = w.find(base + "/autoscalerOptions/resources");
      r != nullptr && !r->is_null()) {
    if (!r->is_object()) {
      throw plugin::InvalidInput(base + "/autoscalerOptions/resources: not an object");
    }
    resources = *r;
  }
  containers->push_back({{"name", "autoscaler"}, {"resources", resources}});
  return spec;
}

}  // namespace

Kind kind_of(const Workload& w) {
  const std::string k = w.kind();
  if (k == kRayCluster) return Kind::kCluster;
  if (k == kRayJob) return Kind::kJob;
  throw plugin::InvalidInput("/kind: " + k + " is not a RayCluster or a RayJob");
}

int64_t int32_at(const Workload& w, const std::string& pointer, int64_t fallback) {
  int64_t v = w.count_at(pointer, fallback);
  if (v > kInt32Max) {
    throw plugin::InvalidInput(pointer + ": " + std::to_string(v) +
                               " is above 2147483647 (a Kubernetes int32)");
  }
  return v;
}

int64_t WorkerGroup::pods() const {
  if (suspended) return 0;
  return std::clamp(replicas, min_replicas, max_replicas) * hosts;
}

int64_t WorkerGroup::min_pods() const { return suspended ? 0 : min_replicas * hosts; }

bool autoscaled(const Workload& w, const std::string& base) {
  return w.flag_at(base + "/enableInTreeAutoscaling", false);
}

std::vector<WorkerGroup> worker_groups(const Workload& w, const std::string& base) {
  std::vector<WorkerGroup> groups;
  const std::string list = base + "/workerGroupSpecs";
  const Json* specs = w.find(list);
  if (specs == nullptr || specs->is_null()) return groups;  // a head-only cluster
  if (!specs->is_array()) throw plugin::InvalidInput(list + ": not a list");
  std::set<std::string> names = {"head"};  // the head's pod set name is taken
  for (std::size_t i = 0; i < specs->size(); ++i) {
    WorkerGroup g;
    g.pointer = list + "/" + std::to_string(i);
    if (!(*specs)[i].is_object()) throw plugin::InvalidInput(g.pointer + ": not an object");
    const Json* name = w.find(g.pointer + "/groupName");
    if (name == nullptr || !name->is_string() || name->get<std::string>().empty()) {
      throw plugin::InvalidInput(g.pointer + "/groupName: missing or not a string");
    }
    g.name = name->get<std::string>();
    if (!names.insert(g.name).second) {
      throw plugin::InvalidInput(g.pointer + "/groupName: \"" + g.name +
                                 "\" names another pod set of this cluster");
    }
    // CRD defaults: minReplicas 0, maxReplicas 2^31-1, numOfHosts 1; a missing replicas is read
    // as minReplicas (KubeRay's clamp of the CRD default 0).
    g.min_replicas = int32_at(w, g.pointer + "/minReplicas", 0);
    g.max_replicas = int32_at(w, g.pointer + "/maxReplicas", kInt32Max);
    g.replicas = int32_at(w, g.pointer + "/replicas", g.min_replicas);
    // numOfHosts 0 is what Go reads for an omitted field; Kueue treats it as 1, so do we.
    g.hosts = std::max<int64_t>(int32_at(w, g.pointer + "/numOfHosts", 1), 1);
    g.suspended = w.flag_at(g.pointer + "/suspend", false);
    if (g.min_replicas > g.max_replicas) {
      // KubeRay versions disagree on this (older: maxReplicas, newer: minReplicas); refuse it.
      throw plugin::InvalidInput(g.pointer + "/minReplicas: " + std::to_string(g.min_replicas) +
                                 " is above maxReplicas " + std::to_string(g.max_replicas));
    }
    if (std::clamp(g.replicas, g.min_replicas, g.max_replicas) * g.hosts > kInt32Max) {
      throw plugin::InvalidInput(g.pointer +
                                 "/numOfHosts: replicas x numOfHosts is above "
                                 "2147483647 (a Kubernetes int32)");
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

void cluster_demand(const Workload& w, const std::string& base, v1::WorkloadDemand& demand) {
  *demand.add_pod_sets() =
      plugin::pod_set("head", 1, head_pod_spec(w, base), base + "/headGroupSpec/template/spec");
  for (const auto& g : worker_groups(w, base)) {
    const std::string at = g.pointer + "/template/spec";
    v1::PodSet set = plugin::pod_set(g.name, g.pods(), w.at(at), at);
    // min_count 0 reads as "count" in the proto, so a group that may shrink to zero pods is
    // reported as not shrinkable; see README.
    if (g.min_pods() < g.pods()) set.set_min_count(g.min_pods());
    *demand.add_pod_sets() = std::move(set);
  }
}

std::vector<std::string> cluster_pod_specs(const Workload& w, const std::string& base) {
  std::vector<std::string> specs = {base + "/headGroupSpec/template/spec"};
  for (const auto& g : worker_groups(w, base)) specs.push_back(g.pointer + "/template/spec");
  return specs;
}

}  // namespace gpuaas::ray
