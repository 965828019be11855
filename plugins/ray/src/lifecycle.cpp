// Lifecycle of a RayCluster (status.state and KubeRay's conditions) and of a RayJob
// (status.jobDeploymentStatus, then status.jobStatus), as Kueue reads them.
#include "ray.hpp"

namespace gpuaas::ray {
namespace {

using plugin::lifecycle;
using State = v1::WorkloadLifecycle;

// A string status field: "" when absent; InvalidInput when of another type.
std::string text_at(const Workload& w, const std::string& pointer) {
  const Json* v = w.find(pointer);
  if (v == nullptr || v->is_null()) return "";
  if (!v->is_string()) throw plugin::InvalidInput(pointer + ": not a string");
  return v->get<std::string>();
}

// "Type: message" of a condition, for a reason.
std::string condition_reason(const Workload& w, const char* type) {
  std::string r = type;
  if (const Json* c = w.condition(type)) {
    std::string why = c->value("message", c->value("reason", ""));
    if (!why.empty()) r += ": " + why;
  }
  return r;
}

bool condition_false(const Workload& w, const char* type) {
  const Json* c = w.condition(type);
  return c != nullptr && c->value("status", "") == "False";
}

}  // namespace

v1::WorkloadLifecycle cluster_lifecycle(const Workload& w) {
  if (w.flag_at("/spec/suspend", false)) {
    return lifecycle(State::SUSPENDED, w.condition_true("RayClusterSuspending")
                                           ? "suspending: deleting its pods"
                                           : "spec.suspend is true");
  }
  if (w.condition_true("RayClusterSuspended"))
    return lifecycle(State::SUSPENDED, "RayClusterSuspended");
  const std::string s = text_at(w, "/status/state");
  const std::string why = text_at(w, "/status/reason");
  if (s == "ready") return lifecycle(State::RUNNING, "status.state is ready");
  if (s == "suspended") return lifecycle(State::SUSPENDED, "status.state is suspended");
  if (s == "failed") return lifecycle(State::FAILED, why.empty() ? "status.state is failed" : why);
  // Newer KubeRay reports through conditions; RayClusterProvisioned stays true once all pods
  // were ready the first time.
  if (w.condition_true("RayClusterProvisioned") && !condition_false(w, "HeadPodReady")) {
    return lifecycle(State::RUNNING, "RayClusterProvisioned");
  }
  if (w.condition_true("ReplicaFailure")) {
    return lifecycle(State::PENDING, condition_reason(w, "ReplicaFailure"));
  }
  if (condition_false(w, "HeadPodReady")) {
    return lifecycle(State::PENDING, condition_reason(w, "HeadPodReady"));
  }
  if (!s.empty()) return lifecycle(State::PENDING, "status.state is " + s);
  return lifecycle(State::PENDING, "waiting for the Ray pods");
}

v1::WorkloadLifecycle job_lifecycle(const Workload& w) {
  const std::string deploy = text_at(w, "/status/jobDeploymentStatus");
  const std::string job = text_at(w, "/status/jobStatus");
  const std::string why = text_at(w, "/status/message");
  // Terminal first, as Kueue's Finished(): Complete succeeded only when the Ray job did.
  if (deploy == "Complete") {
    if (job == "SUCCEEDED") return lifecycle(State::SUCCEEDED, "Ray job SUCCEEDED");
    return lifecycle(State::FAILED, "Ray job " + (job.empty() ? std::string("ended") : job) +
                                        (why.empty() ? "" : ": " + why));
  }
  if (deploy == "Failed") {
    std::string reason = text_at(w, "/status/reason");
    if (reason.empty()) reason = "jobDeploymentStatus is Failed";
    return lifecycle(State::FAILED, why.empty() ? reason : reason + ": " + why);
  }
  if (w.flag_at("/spec/suspend", false)) return lifecycle(State::SUSPENDED, "spec.suspend is true");
  if (deploy == "Suspended" || deploy == "Suspending") {
    return lifecycle(State::SUSPENDED, "jobDeploymentStatus is " + deploy);
  }
  if (deploy == "Running")
    return lifecycle(State::RUNNING, "Ray job " + (job.empty() ? "submitted" : job));
  if (deploy == "Retrying") return lifecycle(State::PENDING, "retrying on a new RayCluster");
  if (deploy.empty() || deploy == "New") {
    // Before KubeRay reports a deployment status only the Ray job status can speak.
    if (job == "RUNNING") return lifecycle(State::RUNNING, "Ray job RUNNING");
    if (job == "SUCCEEDED") return lifecycle(State::SUCCEEDED, "Ray job SUCCEEDED");
    if (job == "FAILED" || job == "STOPPED") return lifecycle(State::FAILED, "Ray job " + job);
    return lifecycle(State::PENDING, "not started");
  }
  if (deploy == "Initializing" || deploy == "Waiting" || deploy == "Scheduling" ||
      deploy == "Scheduled") {
    return lifecycle(State::PENDING, "jobDeploymentStatus is " + deploy);
  }
  return lifecycle(State::PENDING, "unknown jobDeploymentStatus " + deploy);
}

}  // namespace gpuaas::ray
