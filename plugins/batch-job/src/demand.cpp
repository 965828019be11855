// Demand of a Job as Kueue's batch/job integration computes it: one pod set "main" of
// min(parallelism, completions) pods shaped by spec.template, minCount from the
// kueue.x-k8s.io/job-min-parallelism annotation when partial admission is on.
#include <algorithm>
#include <array>

#include "batch_job.hpp"

namespace gpuaas::batch_job {
namespace {

// Kinds of Kueue's integrations that create batch/v1 Jobs for their own pods (JobSet's replicated
// jobs, a RayJob's or RayCluster's submitter, the mpi-operator's launcher, a TrainJob's jobs,
// an AppWrapper's components). Kueue admits the parent and leaves such a Job alone.
struct Parent {
  const char* group;
  const char* kind;
};
constexpr std::array<Parent, 6> kParents = {{{"jobset.x-k8s.io", "JobSet"},
                                             {"ray.io", "RayJob"},
                                             {"ray.io", "RayCluster"},
                                             {"kubeflow.org", "MPIJob"},
                                             {"trainer.kubeflow.org", "TrainJob"},
                                             {"workload.codeflare.dev", "AppWrapper"}}};

// Whether the Job's controller is one of those kinds (any version of the group).
bool part_of_a_parent(const Workload& w) {
  const Json* owners = w.find("/metadata/ownerReferences");
  if (owners == nullptr || !owners->is_array()) return false;
  for (const auto& o : *owners) {
    if (!o.is_object() || o.value("controller", false) != true) continue;
    const std::string api = o.value("apiVersion", "");
    const std::string group = api.substr(0, api.find('/'));
    const std::string kind = o.value("kind", "");
    for (const auto& p : kParents) {
      if (group == p.group && kind == p.kind) return true;
    }
  }
  return false;
}

// The annotation as Kueue's webhook accepts it: a positive decimal integer (int32); 0 when absent.
int64_t min_parallelism(const Workload& w) {
  if (!w.has_annotation(kMinParallelismAnnotation)) return 0;
  const std::string text = w.annotation(kMinParallelismAnnotation);
  const bool digits =
      !text.empty() && text.size() <= 10 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t n = digits ? std::stoll(text) : 0;
  if (n < 1 || n > INT32_MAX) {
    throw plugin::InvalidInput(
        "/metadata/annotations/kueue.x-k8s.io~1job-min-parallelism: want a positive integer, "
        "got " +
        w.json()["metadata"]["annotations"][kMinParallelismAnnotation].dump());
  }
  return n;
}

}  // namespace

v1::WorkloadDemand job_demand(const Workload& w, const Config& config) {
  v1::WorkloadDemand d = plugin::demand_of(w);
  // The API server defaults parallelism to 1; completions unset means "until one succeeds".
  int64_t count = w.int32_count_at("/spec/parallelism", 1);
  if (const Json* c = w.find("/spec/completions"); c != nullptr && !c->is_null()) {
    count = std::min(count, w.int32_count_at("/spec/completions", 0));
  }
  v1::PodSet set = plugin::pod_set(kPodSetName, count, w.at(kPodSpec), kPodSpec);
  if (config.partial_admission) {
    // Kueue's webhook refuses a minimum at or above the count on creation; past that (the user
    // lowered parallelism) it only means "all pods".
    if (const int64_t min = min_parallelism(w); min > 0) set.set_min_count(std::min(min, count));
  }
  *d.add_pod_sets() = std::move(set);
  // Its parent is the workload: queued, admitted and suspended as a whole.
  if (part_of_a_parent(w)) {
    d.clear_queue_name();
    d.clear_priority_class();
  }
  return d;
}

}  // namespace gpuaas::batch_job
