// The simulator plays the operators of the workload kinds (KubeRay, the Training Operator, KServe,
// the Notebook controller, the Job controller): the object a user applies, whether gpuaas let it
// run, which pods the operator would run now, and the status the operator writes. Only the
// simulator knows this; gpuaasd learns it from the plugins, as it would on a real cluster.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuaas::sim {

// One workload as the scenario describes it (one copy: `count` is already expanded).
struct WorkloadSpec {
  std::string name;
  std::string namespace_;
  std::string queue;  // LocalQueue name: label kueue.x-k8s.io/queue-name
  std::string kind;   // PyTorchJob, RayCluster, RayJob, InferenceService, Notebook, Job
  // Pods of the workload. RayCluster and RayJob: GPU workers (0: head only); their GPU-less head
  // (2 CPU, 8Gi) comes on top. Notebook: exactly 1.
  int32_t pods = 1;
  int64_t gpu_milli_per_pod = 1000;  // 500 = half a GPU
  int64_t cpu_milli_per_pod = 4000;
  int64_t memory_bytes_per_pod = int64_t{16} << 30;
  std::string priority_class;                      // "": none (label kueue.x-k8s.io/priority-class)
  std::map<std::string, std::string> annotations;  // gpuaas.io/deadline, expected-duration, ...
  // InferenceService: its autoscaler's bounds and metric (KServe's predictor fields). `pods` is
  // minReplicas; max_replicas -1 is `pods` (a fixed size), 0 no bound; "" and 0 leave
  // scaleMetric and scaleTarget out (Knative's defaults).
  int32_t max_replicas = -1;
  std::string scale_metric;
  int32_t scale_target = 0;
};

// Pods the operator runs now for one pod set, all alike.
struct PodShape {
  std::string pod_set;  // e.g. "head", "worker", "master", "predictor"
  int32_t count = 0;
  int64_t gpu_milli = 0;  // per pod
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::map<std::string, std::string> node_selector;  // from the (admitted) template
};

enum class Phase { kPending, kRunning, kSucceeded, kFailed };

class KindModel {
 public:
  virtual ~KindModel() = default;
  virtual std::string_view kind() const = 0;
  virtual std::string_view api_version() const = 0;
  // True for kinds that finish on their own (jobs); false for services, clusters, notebooks.
  virtual bool finishes() const = 0;
  // The object as a user applies it, held back for gpuaas (suspended, or the kind's own gate),
  // with the queue and priority labels and the annotations. Throws std::invalid_argument when
  // the kind cannot run `pods` (a Notebook other than 1, a job or service with none).
  virtual nlohmann::json make_object(const WorkloadSpec& spec) const = 0;
  // Whether the object may run now (gpuaas admitted it and did not suspend it since), read from
  // the gate as the operator reads it. Where scale to zero closes the same gate (a Notebook's stop
  // annotation; an InferenceService in Standard mode) a scaled-to-zero object reads false too.
  virtual bool admitted(const nlohmann::json& object) const = 0;
  // The pods the operator would run for the object as it is now: none while held back or scaled
  // to zero, nor once a kind that finishes has succeeded or failed; otherwise every pod set with
  // pods (sets scaled to zero are left out) with the node selectors of its (admitted) template.
  virtual std::vector<PodShape> pods(const nlohmann::json& object) const = 0;
  // Writes the status the operator would write in this phase (conditions, state fields), so that
  // the kind's plugin reads the same phase back. kSucceeded on a kind that does not finish throws
  // std::invalid_argument. A Notebook has no failed state: kFailed writes a crash-looping
  // container, which the workbench plugin reads as PENDING (the pod still holds its GPU).
  virtual void set_phase(nlohmann::json& object, Phase phase) const = 0;
  // Labels the operator puts on the pods of a pod set, where a kind's plugin finds its pods by
  // them (KServe's serving.kserve.io/inferenceservice); none by default.
  virtual std::map<std::string, std::string> pod_labels(const nlohmann::json& object,
                                                        std::string_view pod_set) const;
};

// Whether gpuaas scaled the object to zero (its SCALE_TO_ZERO patch records what it changed in
// the gpuaas.io/scaled-from annotation, and SCALE_BACK removes it). This tells an idle service at
// zero from a suspended or stopped one where both close the same gate (a Notebook's stop
// annotation, an InferenceService's in Standard mode).
bool scaled_to_zero(const nlohmann::json& object);

// The model of a kind by name (PyTorchJob, RayCluster, RayJob, InferenceService, Notebook, Job);
// nullptr for an unknown kind.
const KindModel* kind_model(std::string_view kind);
// The kinds known, for error messages and --help.
std::vector<std::string> known_kinds();

}  // namespace gpuaas::sim
