// AdmissionController's state and its output side: decisions become the plugin's patches plus a
// placement hint; status changes become WorkloadQueueStatus events. Private to gpuaas_core.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost/gpu_accounting.hpp"
#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/admission_controller.hpp"
#include "queue_metrics.hpp"
#include "reclaim/reclaim_book.hpp"
#include "scaleout/pool_scaler.hpp"

namespace gpuaas::telemetry {
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

struct AdmissionController::Impl {
  Impl(bus::Subjects s, std::string src, telemetry::Registry* registry);

  void apply_policy(const KubeObject& obj, ClusterModel& model);
  // The policy set a PolicySet object carries; null with *error when it does not validate.
  static std::shared_ptr<const policy::PolicySet> parse_policy(const std::string& text,
                                                               std::string* error);
  void refuse(const std::string& why);
  void upsert_node(ClusterModel& model, const std::string& name);
  void update_pod(ClusterModel& model, const ModelChange& ch);
  void upsert_object(ClusterModel& model, const std::string& key, const KubeObject& obj);
  void remove_object(ClusterModel& model, const std::string& key);
  void emit(ClusterModel& model, std::string_view event_id,
            std::vector<admission::Decision> decisions);
  // The plugin's patches for `action` on the object, as actions on the bus. False: none.
  bool publish(ClusterModel& model, const KubeObject& obj, WorkloadAction action,
               const v1::ActionRequest& req, const std::string& rule, const std::string& hint,
               std::string_view event_id);
  void publish_status(ClusterModel& model, const KubeObject& obj, const admission::Explanation& x,
                      std::string_view event_id);
  std::string next_id(std::string_view event_id);  // decision ids: "<event id>/<n>"
  // Node pools (scaleout/): every scan interval of event time, after the admission pass.
  void scale_pass(ClusterModel& model, std::string_view event_id);

  // Idle reclaim and notebook gating (reclaim/reclaim_control.cpp).
  // Looks at the workloads the rules watch (every kReclaimInterval of event time, and those at
  // zero whenever samples arrive): scales idle ones to zero, releases reservations that
  // expired, wakes those asked for. Preemptions that take lent quota back go to `out`.
  void reclaim_pass(ClusterModel& model, std::string_view event_id,
                    std::vector<admission::Decision>& out);
  // The object of a workload idle reclaim holds out of the queue changed: a user started it?
  void held_out_changed(ClusterModel& model, const std::string& key, const KubeObject& obj,
                        std::vector<admission::Decision>& out);
  // Notebooks a NotebookPolicy gates that run without admission are stopped until admitted.
  void gate_pass(ClusterModel& model, std::string_view event_id);
  WorkloadAction admit_action(ClusterModel& model, const std::string& key);
  std::string reclaim_json(const std::string& key, const ClusterModel& model) const;
  // Shared by reclaim_pass's steps.
  void reclaim(ClusterModel& model, const std::string& key, const KubeObject& obj, ReclaimState& st,
               ReclaimRule& rule, const std::string& why, std::string_view event_id);
  void wake(ClusterModel& model, const std::string& key, const KubeObject& obj, ReclaimState& st,
            const std::string& why, std::string_view event_id,
            std::vector<admission::Decision>& out);
  void release_reservation(ClusterModel& model, const std::string& key, const KubeObject& obj,
                           ReclaimState& st, std::string_view event_id);

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
  std::size_t output_seq = 0;                                      // per event: decision ids
  std::string current_event;                                       // the event being applied
  std::vector<admission::Decision> pending_decisions;  // from reclaim, before the pass's own
  ReclaimBook book;
  scaleout::PoolScaler scaler;
  QueueMetrics queue_metrics;
  cost::GpuAccounting accounting;
  wire::EventTime next_reclaim{};
  uint64_t samples_seen = 0;
  std::set<std::string> gate_candidates;    // notebooks seen this event that a policy gates
  std::set<std::string> gated;              // stopped by the gate, not yet admitted
  std::set<std::string> max_wait_reported;  // notebooks reported for waiting past maxWait
  // The admission last published per admitted workload: its ActionRequest (serialized) and
  // placement hint, so a patch that met a conflict can be published again from a newer object.
  std::map<std::string, std::pair<std::string, std::string>> admit_requests;
  // Admissions and preemptions that met a CONFLICT: the rule and the resourceVersion the patch
  // was based on. Sent again once the object in the model has another resourceVersion.
  std::map<std::string, std::pair<std::string, std::string>> reissue;
  void reissue_pass(ClusterModel& model, std::string_view event_id);

  telemetry::Registry* registry = nullptr;
  telemetry::Counter* reloads_applied = nullptr;
  telemetry::Counter* reloads_refused = nullptr;
  telemetry::Counter* bad_annotations = nullptr;
  telemetry::Counter* action_errors = nullptr;
  telemetry::Family<telemetry::Counter>* decisions = nullptr;        // by kind and rule
  telemetry::Family<telemetry::Counter>* reclaim_actions = nullptr;  // by action and rule
  telemetry::Family<telemetry::Gauge>* reclaim_workloads = nullptr;  // by phase
};

}  // namespace gpuaas::core
