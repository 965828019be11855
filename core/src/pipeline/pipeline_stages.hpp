// The stages a DecisionPipeline runs, and the feed that brings them the model's changes.
// Private to gpuaas_core.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "admission/stage/admission_stage.hpp"
#include "admission/stage/queue_metrics.hpp"
#include "binding/binding_stage.hpp"
#include "capacity/capacity_stage.hpp"
#include "cost/cost_stage.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "pipeline/conflict_retry.hpp"
#include "pipeline/decision_sink.hpp"
#include "reclaim/reclaim_stage.hpp"
#include "scaleout/scale_out_stage.hpp"
#include "serving_scale/serving_scale_stage.hpp"

namespace gpuaas::telemetry {
class Counter;
}

namespace gpuaas::core {

struct DecisionPipeline::Stages {
  Stages(bus::Subjects subjects, std::string source, telemetry::Registry* registry,
         WorkloadInterpreter* interpreter);

  // Policy intake (policy_intake.cpp). A PolicySet object arrived: validated as a whole; a bad
  // one is refused and the running one stays.
  void apply_policy(const KubeObject& obj, ClusterModel& model);
  // The policy set a PolicySet object carries; null with *error when it does not validate.
  static std::shared_ptr<const policy::PolicySet> parse_policy(const std::string& text,
                                                               std::string* error);
  void set_policy(const policy::PolicySet& set);  // on every stage but admission
  static const std::string& policy_key();         // the model key of the PolicySet object
  void refuse(const std::string& why);

  // The feed (model_feed.cpp): what the model's changes mean to each stage.
  void feed(const std::vector<ModelChange>& changes, ClusterModel& model);
  void upsert_node(const ClusterModel& model, const std::string& name);
  void upsert_object(const ClusterModel& model, const std::string& key, const KubeObject& obj);
  void remove_object(const ClusterModel& model, const std::string& key);
  AdmissionStage::Hooks hooks(const ClusterModel& model);
  // An admitted workload without a binding plan gets one, from the engine's placement or its
  // admission's annotation; false when there is none.
  bool ensure_plan(const ClusterModel& model, const std::string& workload);
  // Before a pod of an admitted workload is accounted or opened, its workload has its plan.
  void plan_for_pod(const ClusterModel& model, const std::string& pod_key);

  QueueMetrics queue_metrics;
  DecisionSink sink;
  ConflictRetry retry;
  AdmissionStage admission;
  BindingStage binding;
  ReclaimStage reclaim;
  ScaleOutStage scale_out;
  CapacityStage capacity;
  ServingScaleStage serving_scale;
  CostStage cost;
  std::string policy_text;  // the PolicySet object in force
  // Decisions taken while feeding the changes (a wake), sent before the pass's own.
  std::vector<admission::Decision> pending;
  telemetry::Counter* reloads_applied = nullptr;
  telemetry::Counter* reloads_refused = nullptr;
};

}  // namespace gpuaas::core
