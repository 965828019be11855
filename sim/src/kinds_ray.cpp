// RayCluster and RayJob (KubeRay, ray.io/v1). The cluster a scenario asks for is a GPU-less head
// (2 CPU, 8Gi: it runs the GCS and the dashboard, not the work) plus one worker group `workers`
// of `pods` replicas: so `pods` counts GPU workers and the head comes on top, as Kueue counts a
// Ray cluster's pods. Both kinds are held by spec.suspend; ADMIT clears it and puts the flavor's
// node labels into every group's template (a RayJob's under spec.rayClusterSpec).
#include <algorithm>

#include "kinds_common.hpp"

namespace gpuaas::sim::kinds {
namespace {

constexpr int64_t kInt32Max = 2147483647;
constexpr const char* kImage = "rayproject/ray:2.41.0-gpu";

json cluster_spec(const WorkloadSpec& spec) {
  json head = {
      {"rayStartParams", json::object()},
      {"template",
       {{"spec",
         {{"containers", json::array({{{"name", "ray-head"},
                                       {"image", kImage},
                                       {"resources", resources(0, 2000, int64_t{8} << 30)}}})}}}}}};
  // replicas = minReplicas = maxReplicas: a fixed-size group, nothing for an autoscaler to do.
  json workers = {
      {"groupName", "workers"},
      {"replicas", spec.pods},
      {"minReplicas", spec.pods},
      {"maxReplicas", spec.pods},
      {"rayStartParams", json::object()},
      {"template",
       {{"spec", {{"containers", json::array({container("ray-worker", kImage, spec)})}}}}}};
  return {{"rayVersion", "2.41.0"},
          {"headGroupSpec", std::move(head)},
          {"workerGroupSpecs", json::array({std::move(workers)})}};
}

// With enableInTreeAutoscaling KubeRay adds the Ray autoscaler to the head pod (unless the
// template has it): autoscalerOptions.resources, else its default 500m CPU and 512Mi.
json autoscaler(const json& o, const std::string& base, const json& head) {
  if (!flag(o, base + "/enableInTreeAutoscaling", false)) return json::array();
  if (const json* cs = find(head, "/containers"); cs != nullptr && cs->is_array()) {
    for (const auto& c : *cs) {
      if (c.is_object() && c.value("name", "") == "autoscaler") return json::array();
    }
  }
  const json* r = find(o, base + "/autoscalerOptions/resources");
  return json::array(
      {{{"name", "autoscaler"},
        {"resources",
         r != nullptr && r->is_object() ? *r : resources(0, 500, int64_t{512} << 20)}}});
}

// The pods KubeRay runs for the RayClusterSpec at `base`: the head, and each worker group's
// clamp(replicas, minReplicas, maxReplicas) x numOfHosts, as its GetWorkerGroupDesiredReplicas
// computes it. So SCALE_TO_ZERO (replicas and minReplicas 0, or min and max 0 under the
// autoscaler) leaves the head alone.
std::vector<PodShape> cluster_pods(const json& o, const std::string& base) {
  std::vector<PodShape> out;
  if (const json* head = find(o, base + "/headGroupSpec/template/spec"))
    out.push_back(shape_of("head", 1, *head, autoscaler(o, base, *head)));
  const json* groups = find(o, base + "/workerGroupSpecs");
  if (groups == nullptr || !groups->is_array()) return out;
  for (const auto& g : *groups) {
    const int64_t min = integer(g, "/minReplicas", 0);
    const int64_t max = integer(g, "/maxReplicas", kInt32Max);
    const int64_t replicas = std::clamp(integer(g, "/replicas", min), min, std::max(min, max));
    const int64_t n = flag(g, "/suspend", false)
                          ? 0
                          : replicas * std::max<int64_t>(integer(g, "/numOfHosts", 1), 1);
    const json* pod_spec = find(g, "/template/spec");
    if (n > 0 && pod_spec != nullptr)
      out.push_back(shape_of(g.value("groupName", ""), static_cast<int32_t>(n), *pod_spec));
  }
  return out;
}

int64_t worker_count(const std::vector<PodShape>& pods) {
  int64_t n = 0;
  for (const auto& p : pods) n += p.pod_set == "head" ? 0 : p.count;
  return n;
}

class RayClusterModel final : public KindModel {
 public:
  std::string_view kind() const override { return "RayCluster"; }
  std::string_view api_version() const override { return "ray.io/v1"; }
  bool finishes() const override { return false; }

  json make_object(const WorkloadSpec& spec) const override {
    require_pods(spec, 0);
    json o = object_head(spec, api_version(), kind());
    o["spec"] = cluster_spec(spec);
    o["spec"]["suspend"] = true;
    return o;
  }

  bool admitted(const json& o) const override { return !flag(o, "/spec/suspend", false); }

  std::vector<PodShape> pods(const json& o) const override {
    if (!admitted(o)) return {};
    return cluster_pods(o, "/spec");
  }

  // KubeRay's status.state (older readers) and its conditions (KubeRay 1.2+), both of which the
  // plugin reads.
  void set_phase(json& o, Phase phase) const override {
    json status = json::object();
    switch (phase) {
      case Phase::kPending:
        status["conditions"] = {
            condition("HeadPodReady", false, "HeadPodNotFound"),
            condition("RayClusterProvisioned", false, "RayClusterPodsProvisioning")};
        break;
      case Phase::kRunning: {
        const int64_t workers = worker_count(pods(o));
        status["state"] = "ready";
        status["readyWorkerReplicas"] = workers;
        status["desiredWorkerReplicas"] = workers;
        status["conditions"] = {
            condition("HeadPodReady", true, "HeadPodRunningAndReady"),
            condition("RayClusterProvisioned", true, "AllPodRunningAndReadyFirstTime")};
        break;
      }
      case Phase::kFailed:
        status["state"] = "failed";
        status["reason"] = "simulated failure";
        break;
      case Phase::kSucceeded:
        no_such_phase(kind(), phase);
    }
    o["status"] = std::move(status);
  }
};

// A RayJob in HTTPMode: KubeRay submits the entrypoint to the dashboard itself, so there is no
// submitter pod and the demand is exactly the cluster's. The cluster is deleted once the job
// finishes (shutdownAfterJobFinishes), so a finished RayJob runs no pods.
class RayJobModel final : public KindModel {
 public:
  std::string_view kind() const override { return "RayJob"; }
  std::string_view api_version() const override { return "ray.io/v1"; }
  bool finishes() const override { return true; }

  json make_object(const WorkloadSpec& spec) const override {
    require_pods(spec, 0);
    json o = object_head(spec, api_version(), kind());
    o["spec"] = {{"suspend", true},
                 {"entrypoint", "python /home/ray/train.py"},
                 {"submissionMode", "HTTPMode"},
                 {"shutdownAfterJobFinishes", true},
                 {"rayClusterSpec", cluster_spec(spec)}};
    return o;
  }

  bool admitted(const json& o) const override { return !flag(o, "/spec/suspend", false); }

  std::vector<PodShape> pods(const json& o) const override {
    const json* d = find(o, "/status/jobDeploymentStatus");
    const bool finished = d != nullptr && (*d == "Complete" || *d == "Failed");
    if (!admitted(o) || finished) return {};
    return cluster_pods(o, "/spec/rayClusterSpec");
  }

  // jobDeploymentStatus (KubeRay's view of the deployment) and jobStatus (the Ray job's).
  // A failed Ray job ends in Failed with reason AppFailed, as KubeRay 1.2+ writes it.
  void set_phase(json& o, Phase phase) const override {
    json status = json::object();
    switch (phase) {
      case Phase::kPending:
        status["jobDeploymentStatus"] = "Initializing";
        break;
      case Phase::kRunning:
        status = {{"jobDeploymentStatus", "Running"}, {"jobStatus", "RUNNING"}};
        break;
      case Phase::kSucceeded:
        status = {{"jobDeploymentStatus", "Complete"}, {"jobStatus", "SUCCEEDED"}};
        break;
      case Phase::kFailed:
        status = {{"jobDeploymentStatus", "Failed"},
                  {"jobStatus", "FAILED"},
                  {"reason", "AppFailed"},
                  {"message", "simulated failure"}};
        break;
    }
    if (phase != Phase::kPending) status["startTime"] = stamp(o);
    o["status"] = std::move(status);
  }
};

}  // namespace

const KindModel& ray_cluster_model() {
  static const RayClusterModel model;
  return model;
}

const KindModel& ray_job_model() {
  static const RayJobModel model;
  return model;
}

}  // namespace gpuaas::sim::kinds
