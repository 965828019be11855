// Cost in the daemon: after the other stages, every event states what its changes touched
// (nodes, pods, reservations) in the usage ledger at the model's clock, priced by the
// CostModel; job outcomes are counted as workloads succeed. The report and the metrics read
// the ledger (core/src/views/). Private to gpuaas_core.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "capacity/capacity_stage.hpp"
#include "cost/gpu_accounting.hpp"
#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"

namespace gpuaas::core {

class CostStage {
 public:
  explicit CostStage(telemetry::Registry* registry) : accounting_(registry) {}

  void set_policy(const policy::PolicySet& set) { accounting_.set_policy(set); }
  // A workload's lifecycle said Succeeded: one job outcome, once per incarnation.
  void succeeded(const std::string& key, const KubeObject& workload,
                 const std::string& cluster_queue) {
    accounting_.succeeded(key, workload, cluster_queue);
  }
  void forget(const std::string& key) { accounting_.forget(key); }
  // The event's changes, once the other stages decided: `decided` when something was sent
  // (reservations may have moved), `coming_gpus` of nodes asked for and not yet registered,
  // `touched` the pods ("namespace/pod") whose samples changed, `served` what serving replicas
  // answered within their objectives (the capacity stage's reading of the same samples).
  void after_event(const std::vector<ModelChange>& changes, ClusterModel& model,
                   const admission::Scheduler& engine,
                   const std::map<std::string, int64_t>& coming_gpus, bool watch_reservations,
                   bool decided, const std::vector<std::string>& touched,
                   const std::vector<Served>& served);
  const cost::GpuAccounting& accounting() const { return accounting_; }

  void save_state(base::ArchiveWriter& w) const { accounting_.save_state(w); }
  void load_state(base::ArchiveReader& r) { accounting_.load_state(r); }
  void save_services(base::ArchiveWriter& w) const { accounting_.save_services(w); }
  void load_services(base::ArchiveReader& r) { accounting_.load_services(r); }

 private:
  cost::GpuAccounting accounting_;
};

}  // namespace gpuaas::core
