// Where every decision leaves the pipeline, once: the workload plugin's patches for a decision
// become actions on the bus (target filled in, rule, reason, decision id, cause, event time and
// the epoch), and status changes become WorkloadQueueStatus events. Stages decide; only the sink
// encodes. Private to gpuaas_core.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::telemetry {
class Counter;
class Registry;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

class BindingStage;
class ConflictRetry;
class QueueMetrics;

class DecisionSink {
 public:
  DecisionSink(bus::Subjects subjects, std::string source, telemetry::Registry* registry,
               WorkloadInterpreter* interpreter, QueueMetrics& queue_metrics);

  // Every event starts its decision ids again ("<event id>/<n>") and stamps its time. The model
  // gives a group's members: what is decided for a group is done to each of them.
  void begin(std::string_view event_id, wire::EventTime now, const ClusterModel* model);
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }
  // Where what is sent is remembered, so that a 409 can be redone (conflict_retry.hpp).
  void set_retry(ConflictRetry* retry) { retry_ = retry; }
  // Admitting a Pod (a plain Pod, a pod group's member) narrows it to its planned node.
  void set_binding(BindingStage* binding) { binding_ = binding; }
  const std::string& event_id() const { return event_id_; }

  // The plugin's patches for `action` on the object; the first merge patch also carries the
  // placement `hint` when there is one. False: no patch (no plugin, it failed, or the object
  // already is as asked).
  bool publish(const KubeObject& obj, WorkloadAction action, const v1::ActionRequest& req,
               const std::string& rule, const std::string& hint);
  // An action its stage made whole but for the ids, time and epoch (node scale-out).
  void publish(v1::Action action);
  // A WorkloadQueueStatus event for the workload.
  void publish_status(const KubeObject& obj, const admission::Explanation& x);

  bool empty() const { return output_.empty(); }
  std::vector<Outbound> take();

 private:
  bool publish_one(const KubeObject& obj, const std::string& workload, WorkloadAction action,
                   const v1::ActionRequest& req, const std::string& rule, const std::string& hint);
  std::string next_id();
  void stamp(v1::Action& a);

  bus::Subjects subjects_;
  std::string source_;
  WorkloadInterpreter* interpreter_;
  const ClusterModel* model_ = nullptr;
  ConflictRetry* retry_ = nullptr;
  BindingStage* binding_ = nullptr;
  QueueMetrics& queue_metrics_;
  telemetry::Counter* action_errors_ = nullptr;
  std::vector<Outbound> output_;
  std::string event_id_;
  wire::EventTime now_{};
  std::size_t seq_ = 0;
  uint64_t epoch_ = 0;
};

}  // namespace gpuaas::core
