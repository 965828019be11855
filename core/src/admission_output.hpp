// AdmissionController's state and its output side: decisions become the plugin's patches plus a
// placement hint; status changes become WorkloadQueueStatus events. Private to gpuaas_core.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/admission_controller.hpp"

namespace gpuaas::telemetry {
class Counter;
class Histogram;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

struct AdmissionController::Impl {
  Impl(bus::Subjects s, std::string src, telemetry::Registry* registry);

  void apply_policy(const KubeObject& obj, ClusterModel& model);
  void refuse(const std::string& why);
  void upsert_node(ClusterModel& model, const std::string& name);
  void update_pod(ClusterModel& model, const ModelChange& ch);
  void upsert_object(ClusterModel& model, const std::string& key, const KubeObject& obj);
  void remove_object(ClusterModel& model, const std::string& key);
  void emit(ClusterModel& model, std::string_view event_id,
            std::vector<admission::Decision> decisions);

  bus::Subjects subjects;
  std::string source;
  std::unique_ptr<admission::Scheduler> scheduler;
  std::string policy_text;
  std::vector<bus::Message> output;
  std::unordered_map<std::string, admission::Time> first_seen;  // queue order: first event seen
  std::set<std::string> admitted;  // admitted by us: PENDING then means starting, not waiting
  std::set<std::string> queued;    // keys the engine holds
  // Pods of queued workloads, by pod key: their node and requests (the engine counts them).
  std::unordered_map<std::string, std::pair<std::string, ResourceList>> managed_pods;
  std::unordered_map<std::string, ResourceList> managed_requests;  // by node

  telemetry::Registry* registry = nullptr;
  telemetry::Counter* reloads_applied = nullptr;
  telemetry::Counter* reloads_refused = nullptr;
  telemetry::Counter* bad_annotations = nullptr;
  telemetry::Counter* action_errors = nullptr;
  telemetry::Family<telemetry::Counter>* decisions = nullptr;    // by kind and rule
  telemetry::Family<telemetry::Histogram>* wait_time = nullptr;  // by cluster_queue
};

}  // namespace gpuaas::core
