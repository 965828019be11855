// Lifecycle from the Job's status, read as Kueue reads it: a true Complete or Failed condition
// finishes it; spec.suspend holds it; active pods run it. FailureTarget and SuccessCriteriaMet
// come first while the controller is still terminating pods, which hold their resources until
// Failed or Complete follows, so the Job still counts as running then.
#include "batch_job.hpp"

namespace gpuaas::batch_job {

using plugin::describe_condition;

v1::WorkloadLifecycle job_lifecycle(const Workload& w) {
  if (w.condition_true("Failed")) {
    return plugin::lifecycle(v1::WorkloadLifecycle::FAILED, describe_condition(w, "Failed"));
  }
  if (w.condition_true("Complete")) {
    return plugin::lifecycle(v1::WorkloadLifecycle::SUCCEEDED, describe_condition(w, "Complete"));
  }
  // Read before the suspend flag: a malformed count is refused whatever the state.
  const int64_t active = w.int32_count_at("/status/active", 0);
  const int64_t ready = w.int32_count_at("/status/ready", 0);
  if (w.flag_at(kSuspend, false)) {
    return plugin::lifecycle(v1::WorkloadLifecycle::SUSPENDED, "spec.suspend is true");
  }
  if (w.condition_true("Suspended")) {
    return plugin::lifecycle(v1::WorkloadLifecycle::SUSPENDED, describe_condition(w, "Suspended"));
  }
  for (const char* terminating : {"FailureTarget", "SuccessCriteriaMet"}) {
    if (w.condition_true(terminating)) {
      return plugin::lifecycle(v1::WorkloadLifecycle::RUNNING, describe_condition(w, terminating));
    }
  }
  if (active > 0) {
    return plugin::lifecycle(v1::WorkloadLifecycle::RUNNING, std::to_string(active) + " active, " +
                                                                 std::to_string(ready) + " ready");
  }
  if (w.find("/status/startTime") != nullptr) {
    return plugin::lifecycle(v1::WorkloadLifecycle::PENDING, "no active pods");
  }
  return plugin::lifecycle(v1::WorkloadLifecycle::PENDING, "no status yet");
}

}  // namespace gpuaas::batch_job
