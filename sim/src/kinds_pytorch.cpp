// PyTorchJob (Kubeflow Training Operator, kubeflow.org/v1). `pods` counts every pod: one Master
// plus pods-1 Workers (a one-pod job has only the Master), as the operator runs them. Held by
// spec.runPolicy.suspend, which Kueue's webhook sets and gpuaas's ADMIT clears; the operator then
// creates the replicas from their templates, where ADMIT put the flavor's node labels.
#include "kinds_common.hpp"

namespace gpuaas::sim::kinds {
namespace {

constexpr const char* kSuspend = "/spec/runPolicy/suspend";
// Replica types in the plugin's pod set order, with Kueue's pod set names.
constexpr std::pair<const char*, const char*> kTypes[] = {{"Master", "master"},
                                                          {"Worker", "worker"}};

bool finished(const json& o) {
  return condition_true(o, "Succeeded") || condition_true(o, "Failed");
}

class PyTorchJobModel final : public KindModel {
 public:
  std::string_view kind() const override { return "PyTorchJob"; }
  std::string_view api_version() const override { return "kubeflow.org/v1"; }
  bool finishes() const override { return true; }

  json make_object(const WorkloadSpec& spec) const override {
    require_pods(spec, 1);
    json o = object_head(spec, api_version(), kind());
    auto replica = [&](int32_t n) {
      // The operator finds the training container by the name "pytorch".
      return json{
          {"replicas", n},
          {"restartPolicy", "OnFailure"},
          {"template",
           {{"spec",
             {{"containers", json::array({container("pytorch", "example/train:1", spec)})}}}}}};
    };
    json replicas = {{"Master", replica(1)}};
    if (spec.pods > 1) replicas["Worker"] = replica(spec.pods - 1);
    o["spec"] = {{"runPolicy", {{"suspend", true}}}, {"pytorchReplicaSpecs", replicas}};
    return o;
  }

  bool admitted(const json& o) const override { return !flag(o, kSuspend, false); }

  std::vector<PodShape> pods(const json& o) const override {
    std::vector<PodShape> out;
    if (!admitted(o) || finished(o)) return out;  // a finished job's pods are done
    for (const auto& [type, set] : kTypes) {
      const std::string at = std::string("/spec/pytorchReplicaSpecs/") + type;
      if (find(o, at) == nullptr) continue;
      const auto n = static_cast<int32_t>(integer(o, at + "/replicas", 1));
      const json* pod_spec = find(o, at + "/template/spec");
      if (n > 0 && pod_spec != nullptr) out.push_back(shape_of(set, n, *pod_spec));
    }
    return out;
  }

  // The Training Operator's JobConditions and per-type replica counts.
  void set_phase(json& o, Phase phase) const override {
    json conditions = json::array({condition("Created", true, "PyTorchJobCreated")});
    json counts = json::object();
    const char* count_field = phase == Phase::kSucceeded ? "succeeded"
                              : phase == Phase::kFailed  ? "failed"
                                                         : "active";
    for (const auto& [type, set] : kTypes) {
      const std::string at = std::string("/spec/pytorchReplicaSpecs/") + type;
      if (find(o, at) == nullptr) continue;
      counts[type] = {
          {count_field, phase == Phase::kPending ? 0 : integer(o, at + "/replicas", 1)}};
    }
    json status = {{"replicaStatuses", counts}};
    switch (phase) {
      case Phase::kPending:
        break;
      case Phase::kRunning:
        conditions.push_back(condition("Running", true, "PyTorchJobRunning"));
        break;
      case Phase::kSucceeded:
        conditions.push_back(condition("Running", false, "PyTorchJobSucceeded"));
        conditions.push_back(condition("Succeeded", true, "PyTorchJobSucceeded"));
        break;
      case Phase::kFailed:
        conditions.push_back(condition("Running", false, "PyTorchJobFailed"));
        conditions.push_back(condition("Failed", true, "PyTorchJobFailed"));
        break;
    }
    if (phase != Phase::kPending) status["startTime"] = stamp(o);
    status["conditions"] = std::move(conditions);
    o["status"] = std::move(status);
  }
};

}  // namespace

const KindModel& pytorch_job_model() {
  static const PyTorchJobModel model;
  return model;
}

}  // namespace gpuaas::sim::kinds
