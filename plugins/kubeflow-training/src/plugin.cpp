// The kubeflow-training plugin: Kubeflow's training jobs as gang workloads. Each call picks the
// kind's handler; kinds with replica specs share one, TrainJob has its own. No scale to zero:
// a training job has no replica count to park at zero, so idle ones are suspended instead.
#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {
namespace {

// Throws InvalidInput for an object of a kind this plugin was not registered for.
[[noreturn]] void not_ours(const Workload& w) {
  throw plugin::InvalidInput("/apiVersion: " + w.api_version() + " " + w.kind() +
                             " is not a kind of kubeflow-training");
}

}  // namespace

class KubeflowTraining {
 public:
  static constexpr plugin::Info info{"kubeflow-training", "0.1.0", plugin::Stability::kStable};
  // The operators' jobs suspend through spec.runPolicy.suspend and own their pods (or the Job
  // that does); a TrainJob suspends through spec.suspend and runs as a JobSet of its name, which
  // the bridge does not watch: its pods carry the JobSet's name label. MPIJob v2beta1 (the
  // mpi-operator's) comes first: the bridge watches the first version of a kind. Gangs: every pod
  // is bound to the node gpuaas placed it on (binding required).
  static constexpr plugin::Hold kRunPolicy = plugin::Hold::set_true("/spec/runPolicy/suspend");
  static constexpr plugin::Kind kinds[] = {
      {.group = "kubeflow.org",
       .version = "v1",
       .kind = "PyTorchJob",
       .plural = "pytorchjobs",
       .hold = kRunPolicy,
       .binding = plugin::Binding::kRequired},
      {.group = "kubeflow.org",
       .version = "v1",
       .kind = "TFJob",
       .plural = "tfjobs",
       .hold = kRunPolicy,
       .binding = plugin::Binding::kRequired},
      {.group = "kubeflow.org",
       .version = "v2beta1",
       .kind = "MPIJob",
       .plural = "mpijobs",
       .hold = kRunPolicy,
       .binding = plugin::Binding::kRequired},
      {.group = "kubeflow.org",
       .version = "v1",
       .kind = "MPIJob",
       .plural = "mpijobs",
       .hold = kRunPolicy,
       .binding = plugin::Binding::kRequired},
      {.group = "trainer.kubeflow.org",
       .version = "v1alpha1",
       .kind = "TrainJob",
       .plural = "trainjobs",
       .hold = plugin::Hold::set_true("/spec/suspend"),
       .pods = plugin::Pods::by_label("jobset.sigs.k8s.io/jobset-name"),
       .binding = plugin::Binding::kRequired},
  };

  explicit KubeflowTraining(const Json& config) : config_(Config::parse(config)) {}

  v1::WorkloadDemand demand(const Workload& w) {
    if (const ReplicaKind* k = replica_kind(w)) return replica_demand(w, *k);
    if (is_trainjob(w)) return trainjob_demand(w, config_);
    not_ours(w);
  }

  v1::WorkloadLifecycle lifecycle(const Workload& w) {
    if (replica_kind(w) != nullptr) return replica_lifecycle(w);
    if (is_trainjob(w)) return trainjob_lifecycle(w);
    not_ours(w);
  }

  plugin::Patch admit(const Workload& w, const v1::ActionRequest& r) {
    if (const ReplicaKind* k = replica_kind(w)) return replica_admit(w, *k, r);
    if (is_trainjob(w)) return trainjob_admit(w, config_, r);
    not_ours(w);
  }

  plugin::Patch suspend(const Workload& w, const v1::ActionRequest&) {
    if (replica_kind(w) != nullptr) return replica_suspend(w);
    if (is_trainjob(w)) return trainjob_suspend(w);
    not_ours(w);
  }

  v1::WorkloadActivity activity(const Workload& w, const plugin::Samples& samples) {
    if (replica_kind(w) == nullptr && !is_trainjob(w)) not_ours(w);
    return gpu_activity(w, samples, config_.gpu_util_threshold);
  }

 private:
  Config config_;
};

}  // namespace gpuaas::kubeflow_training

GPUAAS_PLUGIN(gpuaas::kubeflow_training::KubeflowTraining)
