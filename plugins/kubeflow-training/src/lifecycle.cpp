// Lifecycle from status conditions. Kubeflow v1 jobs and mpi-operator v2beta1 share the
// JobCondition types Created, Running, Restarting, Succeeded, Suspended, Failed; a TrainJob
// has Created, Suspended, Complete and Failed, and shows running child jobs in jobsStatus.
// Terminal conditions win over everything; a suspend flag in the spec wins over the rest,
// since it is what the next reconcile of the operator will make true.
#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {
namespace {

using plugin::describe_condition;
using plugin::lifecycle;

bool any_active_child(const Workload& w) {
  const Json* jobs = w.find("/status/jobsStatus");
  if (jobs == nullptr || !jobs->is_array()) return false;
  for (const auto& j : *jobs) {
    if (!j.is_object()) continue;
    for (const char* f : {"active", "ready"}) {
      auto it = j.find(f);
      if (it != j.end() && it->is_number() && it->get<double>() > 0) return true;
    }
  }
  return false;
}

}  // namespace

v1::WorkloadLifecycle replica_lifecycle(const Workload& w) {
  if (w.condition_true("Failed")) {
    return lifecycle(v1::WorkloadLifecycle::FAILED, describe_condition(w, "Failed"));
  }
  if (w.condition_true("Succeeded")) {
    return lifecycle(v1::WorkloadLifecycle::SUCCEEDED, describe_condition(w, "Succeeded"));
  }
  if (w.flag_at("/spec/runPolicy/suspend", false)) {
    return lifecycle(v1::WorkloadLifecycle::SUSPENDED, "spec.runPolicy.suspend is true");
  }
  if (w.condition_true("Suspended")) {
    return lifecycle(v1::WorkloadLifecycle::SUSPENDED, describe_condition(w, "Suspended"));
  }
  if (w.condition_true("Restarting")) {
    return lifecycle(v1::WorkloadLifecycle::RUNNING, describe_condition(w, "Restarting"));
  }
  if (w.condition_true("Running")) {
    return lifecycle(v1::WorkloadLifecycle::RUNNING, describe_condition(w, "Running"));
  }
  if (w.condition_true("Created")) {
    return lifecycle(v1::WorkloadLifecycle::PENDING, describe_condition(w, "Created"));
  }
  return lifecycle(v1::WorkloadLifecycle::PENDING, "no status yet");
}

v1::WorkloadLifecycle trainjob_lifecycle(const Workload& w) {
  if (w.condition_true("Failed")) {
    return lifecycle(v1::WorkloadLifecycle::FAILED, describe_condition(w, "Failed"));
  }
  if (w.condition_true("Complete")) {
    return lifecycle(v1::WorkloadLifecycle::SUCCEEDED, describe_condition(w, "Complete"));
  }
  if (w.flag_at("/spec/suspend", false)) {
    return lifecycle(v1::WorkloadLifecycle::SUSPENDED, "spec.suspend is true");
  }
  if (w.condition_true("Suspended")) {
    return lifecycle(v1::WorkloadLifecycle::SUSPENDED, describe_condition(w, "Suspended"));
  }
  if (any_active_child(w)) return lifecycle(v1::WorkloadLifecycle::RUNNING, "child jobs active");
  if (w.condition_true("Created")) {
    return lifecycle(v1::WorkloadLifecycle::PENDING, describe_condition(w, "Created"));
  }
  return lifecycle(v1::WorkloadLifecycle::PENDING, "no status yet");
}

}  // namespace gpuaas::kubeflow_training
