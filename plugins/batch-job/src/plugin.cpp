// The batch-job plugin: Kubernetes batch/v1 Jobs as workloads, the way Kueue's batch/job
// integration treats them. No scale to zero: a Job has no replica count to park at zero that
// its controller would not also read as "run fewer at once", so an idle one is suspended.
#include "batch_job.hpp"

namespace gpuaas::batch_job {

class BatchJob {
 public:
  static constexpr plugin::Info info{"batch-job", "0.1.0", plugin::Stability::kAlpha};
  // Its pods are its own (ownerReferences); a queued Job is created suspended, and its pods bound
  // to the nodes gpuaas placed them on (binding required).
  static constexpr plugin::Kind kinds[] = {{.group = "batch",
                                            .version = "v1",
                                            .kind = "Job",
                                            .plural = "jobs",
                                            .hold = plugin::Hold::set_true("/spec/suspend"),
                                            .binding = plugin::Binding::kRequired}};

  explicit BatchJob(const Json& config) : config_(Config::parse(config)) {}

  v1::WorkloadDemand demand(const Workload& w) { return job_demand(w, config_); }

  v1::WorkloadLifecycle lifecycle(const Workload& w) { return job_lifecycle(w); }

  plugin::Patch admit(const Workload& w, const v1::ActionRequest& r) { return job_admit(w, r); }

  plugin::Patch suspend(const Workload& w, const v1::ActionRequest&) { return job_suspend(w); }

  v1::WorkloadActivity activity(const Workload& w, const plugin::Samples& samples) {
    return gpu_activity(w, samples, config_.gpu_util_threshold);
  }

 private:
  Config config_;
};

}  // namespace gpuaas::batch_job

GPUAAS_PLUGIN(gpuaas::batch_job::BatchJob)
