// Job (batch/v1), as Kueue's batch/job integration holds it: spec.suspend true at creation, which
// the batch-job plugin's ADMIT clears after putting the flavor's node labels into
// spec.template.spec. parallelism = completions = pods: every pod runs at once, once.
#include <algorithm>

#include "kinds_common.hpp"

namespace gpuaas::sim::kinds {
namespace {

bool finished(const json& o) {
  return condition_true(o, "Complete") || condition_true(o, "Failed");
}

// Kueue's podsCount: min(parallelism, completions), parallelism defaulting to 1.
int64_t pod_count(const json& o) {
  const int64_t parallelism = integer(o, "/spec/parallelism", 1);
  const json* completions = find(o, "/spec/completions");
  return completions != nullptr && completions->is_number_integer()
             ? std::min(parallelism, completions->get<int64_t>())
             : parallelism;
}

class BatchJobModel final : public KindModel {
 public:
  std::string_view kind() const override { return "Job"; }
  std::string_view api_version() const override { return "batch/v1"; }
  bool finishes() const override { return true; }

  json make_object(const WorkloadSpec& spec) const override {
    require_pods(spec, 1);
    json o = object_head(spec, api_version(), kind());
    o["spec"] = {{"suspend", true},
                 {"parallelism", spec.pods},
                 {"completions", spec.pods},
                 {"template",
                  {{"spec",
                    {{"restartPolicy", "Never"},
                     {"containers", json::array({container("main", "example/batch:1", spec)})}}}}}};
    return o;
  }

  bool admitted(const json& o) const override { return !flag(o, "/spec/suspend", false); }

  std::vector<PodShape> pods(const json& o) const override {
    const json* pod_spec = find(o, "/spec/template/spec");
    const int64_t n = pod_count(o);
    if (!admitted(o) || finished(o) || pod_spec == nullptr || n <= 0) return {};
    return {shape_of("main", static_cast<int32_t>(n), *pod_spec)};
  }

  // The Job controller's counts and conditions. startTime, once written, stays: the controller
  // does not clear it when the Job is suspended (Kueue does, through the status subresource,
  // which gpuaas's merge patches cannot reach), and the batch-job plugin reads it: a Job that
  // ran keeps its template, so it can be admitted again only to the same flavor.
  void set_phase(json& o, Phase phase) const override {
    const int64_t n = pod_count(o);
    json status = {{"active", 0}, {"ready", 0}};
    if (const json* t = find(o, "/status/startTime")) status["startTime"] = *t;
    switch (phase) {
      case Phase::kPending:
        break;
      case Phase::kRunning:
        status["active"] = n;
        status["ready"] = n;
        break;
      case Phase::kSucceeded:
        status["succeeded"] = integer(o, "/spec/completions", n);
        status["completionTime"] = stamp(o);
        status["conditions"] = {condition("SuccessCriteriaMet", true, "CompletionsReached"),
                                condition("Complete", true, "CompletionsReached")};
        break;
      case Phase::kFailed:
        status["failed"] = 1;
        status["conditions"] = {condition("FailureTarget", true, "BackoffLimitExceeded"),
                                condition("Failed", true, "BackoffLimitExceeded")};
        break;
    }
    if (phase != Phase::kPending && !status.contains("startTime")) status["startTime"] = stamp(o);
    o["status"] = std::move(status);
  }
};

}  // namespace

const KindModel& batch_job_model() {
  static const BatchJobModel model;
  return model;
}

}  // namespace gpuaas::sim::kinds
