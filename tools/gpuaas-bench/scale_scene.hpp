// The scene gpuaas-bench scale times the scale-out pass on: GPU nodes in NodePools, running
// workloads admitted onto them by the admission engine (their Jobs and bound pods in the cluster
// model) and a backlog of pending Jobs whose quota is there but no node is, built in one process
// as the daemon's model and engine hold them when its scale-out stage runs. No bus.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/wire/event_time.hpp"
#include "scale_bench.hpp"

namespace gpuaas::bench::scale {

// The scene's event time ends here: any fixed instant, so that runs compare.
inline const wire::EventTime kT0{std::chrono::milliseconds(1'800'000'000'000)};

// Jobs as the batch plugin declares them: workloads whose pods are found up their controller
// chain, which is what scale-in asks of the model (ClusterModel::workload_of). No demand: the
// engine is fed its WorkloadInfo directly, as the admission stage would from the plugin.
class JobInterpreter : public core::WorkloadInterpreter {
 public:
  std::optional<core::WorkloadView> interpret(const core::KubeObject& o) override {
    if (o.meta.kind != "Job") return std::nullopt;
    core::WorkloadView v;
    v.plugin = "bench";
    return v;
  }
  std::string plugins_json() const override { return "[]"; }
};

// One workload, the same in every run with the same seed.
struct Spec {
  int64_t index = 0;
  bool pending = false;
  int tenant = 0;
  int64_t pods = 1;
  int64_t gpus = 1;  // per pod
  int64_t cpu = 1;   // cores per pod
  int64_t memory_gi = 1;
  int64_t duration_s = 3600;
  std::optional<int64_t> deadline_s;  // after kT0
  std::string ns() const { return "team-" + std::to_string(tenant); }
  std::string name() const { return (pending ? "wait-" : "run-") + std::to_string(index); }
  int64_t total_gpus() const { return pods * gpus; }
};

// The model and the engine as the daemon holds them before its scale-out stage runs.
struct Scene {
  explicit Scene(const ScaleBenchOptions& opts) : o(opts) { model.set_interpreter(&interpreter); }
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  // An object event into the model, decoded as the daemon's intake decodes it.
  void apply(const nlohmann::json& obj, wire::EventTime at);
  core::admission::Amounts amounts(int64_t cpu_cores, int64_t memory_gi, int64_t gpus) const;

  const ScaleBenchOptions& o;
  JobInterpreter interpreter;
  core::ClusterModel model;
  core::ObjectDecoder decoder;
  std::shared_ptr<const policy::PolicySet> set;
  std::unique_ptr<core::admission::Scheduler> engine;
  int cpu = 0, memory = 0, gpu = 0;
  std::vector<int64_t> pool_nodes;
  std::unordered_map<std::string, Spec> specs;  // by workload key, until admitted
  int64_t running = 0, running_pods = 0, running_gpus = 0, pending_deadlines = 0;
};

// The nodes, running work admitted in rounds up to `fill` of the GPUs, then the backlog queued
// just before kT0 and one admission pass; the model's clock at kT0. nullptr when the generated
// policy does not load (said on stderr).
std::unique_ptr<Scene> build_scene(const ScaleBenchOptions& o);

}  // namespace gpuaas::bench::scale
