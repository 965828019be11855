// A RayJob's demand: the cluster it creates (unless it selects an existing one) and the pod that
// submits the job, as Kueue's RayJob integration counts them.
#include "ray.hpp"

namespace gpuaas::ray {
namespace {

// Kueue's stand-in for the submitter Job when spec.submitterPodTemplate is absent (the template
// KubeRay itself uses): one container, requests 500m CPU / 200Mi, limits 1 CPU / 1Gi.
Json default_submitter_pod_spec() {
  return {{"containers",
           {{{"name", "ray-job-submitter"},
             {"resources",
              {{"requests", {{"cpu", "500m"}, {"memory", "200Mi"}}},
               {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}}},
          {"restartPolicy", "Never"}};
}

std::string submission_mode(const Workload& w) {
  const Json* m = w.find("/spec/submissionMode");
  if (m == nullptr || m->is_null()) return "K8sJobMode";  // the CRD default
  if (!m->is_string()) throw plugin::InvalidInput("/spec/submissionMode: not a string");
  std::string mode = m->get<std::string>();
  if (mode.empty()) return "K8sJobMode";
  if (mode != "K8sJobMode" && mode != "HTTPMode" && mode != "InteractiveMode" &&
      mode != "SidecarMode") {
    throw plugin::InvalidInput("/spec/submissionMode: unknown mode \"" + mode + "\"");
  }
  return mode;
}

}  // namespace

std::string job_cluster_base(const Workload& w) {
  const Json* sel = w.find("/spec/clusterSelector");
  if (sel != nullptr && !sel->is_null()) {
    if (!sel->is_object()) throw plugin::InvalidInput("/spec/clusterSelector: not an object");
    if (!sel->empty()) return "";  // runs on an existing RayCluster, which holds its own quota
  }
  const std::string base = "/spec/rayClusterSpec";
  const Json& spec = w.at(base);
  if (!spec.is_object()) throw plugin::InvalidInput(base + ": not an object");
  return base;
}

// SidecarMode runs the submitter as a container of the head pod, not as a pod of its own.
bool job_has_submitter_pod(const Workload& w) { return submission_mode(w) == "K8sJobMode"; }

v1::WorkloadDemand job_demand(const Workload& w) {
  v1::WorkloadDemand d = plugin::demand_of(w);
  const std::string base = job_cluster_base(w);
  if (!base.empty()) cluster_demand(w, base, d);
  if (base.empty()) {
    // KubeRay matches the selector's ray.io/cluster against the RayCluster's name.
    const Json* name = w.find("/spec/clusterSelector/ray.io~1cluster");
    if (name != nullptr && name->is_string() && !name->get<std::string>().empty()) {
      auto* on = d.mutable_runs_on();
      on->set_api_version(w.api_version());
      on->set_kind("RayCluster");
      on->set_namespace_(w.namespace_());
      on->set_name(name->get<std::string>());
    }
  }
  if (job_has_submitter_pod(w)) {
    for (const auto& set : d.pod_sets()) {
      if (set.name() == "submitter") {
        throw plugin::InvalidInput(base +
                                   "/workerGroupSpecs: a group named \"submitter\" "
                                   "collides with the submitter pod set");
      }
    }
    const std::string at = "/spec/submitterPodTemplate/spec";
    if (const Json* spec = w.find(at); spec != nullptr && !spec->is_null()) {
      *d.add_pod_sets() = plugin::pod_set("submitter", 1, *spec, at);
    } else if (const Json* tmpl = w.find("/spec/submitterPodTemplate");
               tmpl != nullptr && !tmpl->is_null()) {
      throw plugin::InvalidInput(at + ": missing");
    } else {
      *d.add_pod_sets() = plugin::pod_set("submitter", 1, default_submitter_pod_spec(),
                                          "(Kueue's default submitter)");
    }
  }
  return d;
}

}  // namespace gpuaas::ray
