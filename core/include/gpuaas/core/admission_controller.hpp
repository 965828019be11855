// Admission in the daemon: follows the cluster model's changes into the admission engine
// (gpuaas/admission/scheduler.hpp), runs a pass after every event, and turns decisions into
// actions (the workload plugin's patches) and queue status for the bus. The policy set in force
// is itself an event in the stream (a PolicySet object), so a replay reloads it at the same
// point and decides the same.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/message.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/v1/event.pb.h"

namespace gpuaas::telemetry {
class Registry;
}

namespace gpuaas::core {

// The object that carries a policy set through the event stream.
inline constexpr const char* kPolicySetApiVersion = "gpuaas.io/v1alpha1";
inline constexpr const char* kPolicySetKind = "PolicySet";
inline constexpr const char* kPolicySetName = "active";

// Reads the policy files and validates them together. ok: the PolicySet object JSON to publish.
// Errors: one line each, FILE:LINE:COLUMN: message.
Result<std::string> policy_set_object(const std::vector<std::string>& files);

class AdmissionController {
 public:
  AdmissionController(bus::Subjects subjects, std::string source, telemetry::Registry* registry);
  ~AdmissionController();
  AdmissionController(const AdmissionController&) = delete;
  AdmissionController& operator=(const AdmissionController&) = delete;

  // After the model applied an event: feeds what changed to the engine, runs a pass, and queues
  // actions and status messages caused by `event_id`.
  void after_event(ClusterModel& model, std::string_view event_id);
  std::vector<bus::Message> take_output();
  // What became of an action (the applier's ActionResult), before its after_event(). An
  // admission or a preemption that met a CONFLICT (the object changed since the patch's
  // resourceVersion) is published again, from the newer object, once the model has seen one.
  void action_result(const v1::ActionResult& result);

  // A policy set refused before it reached the stream (the files did not validate): logged and
  // counted like one refused on arrival.
  void refuse_policy(const std::string& why);
  // Whether a policy set is in force (without one, nothing is admitted or explained).
  bool active() const;
  // The PolicySet object text last applied (to tell whether the files changed).
  const std::string& policy_text() const;
  // `gpuaasctl explain`: the request is "namespace/name" (or a model key); JSON answer.
  std::string explain_json(std::string_view request, const ClusterModel& model) const;
  // The ClusterQueues with their usage and pending counts, for `gpuaasctl state`.
  std::string queues_json(const ClusterModel& model) const;
  // Brings the gauges that mirror the engine's state up to date (before a scrape). Safe to call
  // while other readers read; the caller keeps writers out.
  void refresh_metrics(const ClusterModel& model) const;
  // Where the GPUs went and what each outcome cost, per tenant (ClusterQueue) and project
  // (namespace), over the last `since` of event time or since the start (gpuaasctl report).
  std::string report_json(const ClusterModel& model,
                          std::optional<std::chrono::seconds> since) const;
  // The NodePools node scale-out follows: nodes, what it asked for, its last plan (a JSON array).
  std::string pools_json(const ClusterModel& model) const;

  // Snapshots (admission_snapshot.cpp): the engine, idle reclaim, node pools and accounting.
  // load_state fills a controller that has seen no event; on failure r.ok() is false.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::core
