// The daemon's decisions, as a pipeline of stages run after every event (core/src/pipeline/):
// the model's changes are fed to the stages, then admission (quota, fair sharing, preemption,
// placement), idle reclaim with notebook gating, node scale-out and cost run in that order. What
// they decide leaves through one sink as the workload plugins' patches (epoch-stamped actions)
// and queue status events. The policy set in force is itself an event in the stream (a PolicySet
// object), so a replay reloads it at the same point and decides the same.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/message.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/policy_set_object.hpp"
#include "gpuaas/v1/event.pb.h"

namespace gpuaas::telemetry {
class Registry;
}
namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base

namespace gpuaas::core {

class WorkloadInterpreter;

// One message a decision sends. Actions go to the actions stream, stored with their ce-id as
// Nats-Msg-Id; status events are plain publishes.
struct Outbound {
  bus::Message message;
  bool action = false;
};

class DecisionPipeline {
 public:
  // `interpreter` (may be null, outlives the pipeline): the plugins that turn a decision into
  // patches of the workload's own object.
  DecisionPipeline(bus::Subjects subjects, std::string source, telemetry::Registry* registry,
                   WorkloadInterpreter* interpreter);
  ~DecisionPipeline();
  DecisionPipeline(const DecisionPipeline&) = delete;
  DecisionPipeline& operator=(const DecisionPipeline&) = delete;

  // After the model applied an event: feeds what changed to the stages, runs them, and queues
  // the actions and status messages caused by `event_id`.
  void after_event(ClusterModel& model, std::string_view event_id);
  std::vector<Outbound> take_output();
  // Actions encoded from now on carry this epoch (high availability; 0: none).
  void set_epoch(uint64_t epoch);
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

  // Read-only views (core/src/views/), for the API and the CLI.
  // `gpuaasctl explain`: the request is "namespace/name" (or a model key); JSON answer.
  std::string explain_json(std::string_view request, const ClusterModel& model) const;
  // `gpuaasctl explain` of every queued workload: a page of explanations by key after `after`
  // (of namespace `ns` when not empty), at most `limit` of them and `budget` bytes; each item
  // carries its `key`, the cursor ({"section": "explain", "items", "next"}).
  std::string explain_page(const ClusterModel& model, std::string_view after, std::string_view ns,
                           std::size_t limit, std::size_t budget) const;
  // The ClusterQueues with their usage and pending counts, for `gpuaasctl state`.
  std::string queues_json(const ClusterModel& model) const;
  // Brings the gauges that mirror the stages' state up to date (before a scrape). Safe to call
  // while other readers read; the caller keeps writers out.
  void refresh_metrics(const ClusterModel& model) const;
  // Where the GPUs went and what each outcome cost, per tenant (ClusterQueue) and project
  // (namespace), over the last `since` of event time or since the start (gpuaasctl report).
  std::string report_json(const ClusterModel& model,
                          std::optional<std::chrono::seconds> since) const;
  // The NodePools node scale-out follows: nodes, what it asked for, its last plan (a JSON array).
  std::string pools_json(const ClusterModel& model) const;

  // Snapshots (pipeline_snapshot.cpp), in the layout of the snapshot `schema`: 4 writes each
  // stage's part in turn, serving capacity and each service's cost included (3 had neither); 2
  // (before the stages) wrote the admission, reclaim and gating fields as one list, and is still
  // read. load_state fills a pipeline that has seen no event; on failure r.ok() is false.
  static constexpr uint32_t kSnapshotSchema = 4;
  static constexpr uint32_t kOldestSnapshotSchema = 2;
  void save_state(base::ArchiveWriter& w, uint32_t schema = kSnapshotSchema) const;
  void load_state(base::ArchiveReader& r, uint32_t schema = kSnapshotSchema);

 private:
  struct Stages;
  std::unique_ptr<Stages> stages_;
};

}  // namespace gpuaas::core
