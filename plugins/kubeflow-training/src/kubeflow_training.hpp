// Internals of the kubeflow-training plugin: one function per concept, called from plugin.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/plugin/sdk.hpp"

namespace gpuaas::kubeflow_training {

using plugin::Json;
using plugin::Workload;

// The plugin configuration (JSON object; unknown keys are refused).
struct Config {
  // DCGM_FI_DEV_GPU_UTIL above this (percent) counts as use.
  double gpu_util_threshold = 5.0;
  // The replicated job of a TrainJob's runtime that runs the trainer: the pod set's name and the
  // target of the flavor override ("node" in Kubeflow's runtimes).
  std::string trainjob_trainer_job = "node";
  // Where admission puts a TrainJob's flavor: "podSpecOverrides" (Trainer v2.0, as Kueue does)
  // or "podTemplateOverrides" (later v1alpha1 releases renamed it).
  std::string trainjob_overrides = "podSpecOverrides";

  static Config parse(const Json& config);  // throws InvalidInput
};

// --- Kinds with replica specs: PyTorchJob, TFJob, MPIJob --------------------------------------

struct ReplicaKind {
  std::string api_version;         // "kubeflow.org/v1"
  std::string kind;                // "PyTorchJob"
  std::string field;               // "pytorchReplicaSpecs"
  std::vector<std::string> types;  // in Kueue's pod set order
};

// One replica type present in the object.
struct Replica {
  std::string type;     // "Worker"
  std::string pointer;  // "/spec/pytorchReplicaSpecs/Worker"
  std::string pod_spec() const { return pointer + "/template/spec"; }
};

// The kind's table entry, or nullptr when the object is not a replica-spec kind.
const ReplicaKind* replica_kind(const Workload& w);
// The replica types present, in Kueue's order; throws InvalidInput for unknown or malformed ones.
std::vector<Replica> replicas(const Workload& w, const ReplicaKind& kind);

v1::WorkloadDemand replica_demand(const Workload& w, const ReplicaKind& kind);
plugin::Patch replica_admit(const Workload& w, const ReplicaKind& kind,
                            const v1::ActionRequest& request);
plugin::Patch replica_suspend(const Workload& w);
v1::WorkloadLifecycle replica_lifecycle(const Workload& w);

// --- TrainJob (trainer.kubeflow.org/v1alpha1) ------------------------------------------------

bool is_trainjob(const Workload& w);
v1::WorkloadDemand trainjob_demand(const Workload& w, const Config& config);
plugin::Patch trainjob_admit(const Workload& w, const Config& config,
                             const v1::ActionRequest& request);
plugin::Patch trainjob_suspend(const Workload& w);
v1::WorkloadLifecycle trainjob_lifecycle(const Workload& w);

// --- Activity ---------------------------------------------------------------------------------

v1::WorkloadActivity gpu_activity(const Workload& w, const plugin::Samples& samples,
                                  double threshold);

}  // namespace gpuaas::kubeflow_training
