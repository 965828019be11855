// Demand of the kinds that list their pods as replica specs (Kubeflow v1 PyTorchJob and TFJob,
// MPIJob of mpi-operator v2beta1 and of training-operator v1): one pod set per replica type,
// named and ordered as Kueue names and orders them, so that both agree on a workload's shape.
#include <algorithm>
#include <cctype>

#include "kubeflow_training.hpp"

namespace gpuaas::kubeflow_training {
namespace {

const std::vector<ReplicaKind>& table() {
  static const std::vector<ReplicaKind> kinds = {
      {"kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", {"Master", "Worker"}},
      {"kubeflow.org/v1",
       "TFJob",
       "tfReplicaSpecs",
       {"Chief", "Master", "PS", "Worker", "Evaluator"}},
      {"kubeflow.org/v2beta1", "MPIJob", "mpiReplicaSpecs", {"Launcher", "Worker"}},
      // training-operator's own MPIJob (its examples still use it); same shape and conditions.
      {"kubeflow.org/v1", "MPIJob", "mpiReplicaSpecs", {"Launcher", "Worker"}},
  };
  return kinds;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

const ReplicaKind* replica_kind(const Workload& w) {
  for (const auto& k : table()) {
    if (k.kind == w.kind() && k.api_version == w.api_version()) return &k;
  }
  return nullptr;
}

std::vector<Replica> replicas(const Workload& w, const ReplicaKind& kind) {
  const std::string at = "/spec/" + kind.field;
  const Json& specs = w.at(at);
  if (!specs.is_object()) throw plugin::InvalidInput(at + ": not an object");
  for (const auto& [type, spec] : specs.items()) {
    if (std::find(kind.types.begin(), kind.types.end(), type) == kind.types.end()) {
      throw plugin::InvalidInput(at + "/" + type + ": unknown replica type for " + kind.kind +
                                 " (want " + joined(kind.types) + ")");
    }
    if (!spec.is_object()) throw plugin::InvalidInput(at + "/" + type + ": not an object");
  }
  std::vector<Replica> out;
  for (const auto& type : kind.types) {
    if (specs.contains(type)) out.push_back({type, at + "/" + type});
  }
  if (out.empty()) throw plugin::InvalidInput(at + ": no replica types");
  return out;
}

v1::WorkloadDemand replica_demand(const Workload& w, const ReplicaKind& kind) {
  v1::WorkloadDemand d = plugin::demand_of(w);
  for (const auto& r : replicas(w, kind)) {
    const int64_t count = w.int32_count_at(r.pointer + "/replicas", 1);
    v1::PodSet set = plugin::pod_set(lower(r.type), count, w.at(r.pod_spec()), r.pod_spec());
    // PyTorch elastic training runs with anything from minReplicas workers up.
    if (kind.kind == "PyTorchJob" && r.type == "Worker") {
      if (const Json* policy = w.find("/spec/elasticPolicy");
          policy != nullptr && !policy->is_null() && !policy->is_object()) {
        throw plugin::InvalidInput("/spec/elasticPolicy: not an object");
      }
      if (const Json* m = w.find("/spec/elasticPolicy/minReplicas");
          m != nullptr && !m->is_null()) {
        const int64_t min = w.int32_count_at("/spec/elasticPolicy/minReplicas", 0);
        // 0 in min_count means "all": an elastic minimum of 0 still needs one worker to start.
        set.set_min_count(std::clamp<int64_t>(min, std::min<int64_t>(1, count), count));
      }
    }
    *d.add_pod_sets() = std::move(set);
  }
  return d;
}

}  // namespace gpuaas::kubeflow_training
