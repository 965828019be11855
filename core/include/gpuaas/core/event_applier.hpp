// One message from the event stream -> the cluster model, or a dead letter with its reason.
// Single-threaded by design: the intake applies in stream order.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/bus/message.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/v1/event.pb.h"

namespace gpuaas::telemetry {
class Registry;
class Counter;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

// Why input was rejected; a bounded set, used as a metric label.
enum class RejectReason {
  kSubject,
  kUndecodable,
  kBadObject,
  kMismatch,
  kBadSample,
  kSubmission,  // a tenant's submission that is not a workload of its own (submission.hpp)
  kCount
};
std::string_view reject_reason_name(RejectReason r);

struct Delivery {
  std::string_view subject;
  std::string_view data;
  std::optional<std::string_view> content_type;
  uint64_t stream_sequence = 0;
};

class EventApplier {
 public:
  // `interpreter` (may be null, outlives the applier): the plugins that tell a tenant's
  // submission of a workload from anything else; without them nothing can be submitted.
  EventApplier(bus::Subjects subjects, std::string source, telemetry::Registry* registry,
               WorkloadInterpreter* interpreter = nullptr);
  void set_interpreter(WorkloadInterpreter* interpreter) { interpreter_ = interpreter; }

  // Applies the message, or queues a dead letter for it. Returns true when applied.
  bool apply(const Delivery& d, ClusterModel& model);
  // The id of the event last given to apply() ("" when its envelope did not decode).
  std::string_view last_event_id() const { return event_id_; }
  // Dead letters queued since the last call with the stream sequence of their input.
  std::vector<std::pair<bus::Message, uint64_t>> take_deadletters() {
    return std::exchange(deadletters_, {});
  }
  // The action result the last apply() took, once (nullptr when it was something else).
  const v1::ActionResult* take_action_result() {
    return std::exchange(has_result_, false) ? &event_.queue().action_result() : nullptr;
  }
  // Outcomes of actions reported by an applier (gpuaas-bridge), by ActionResult::Outcome.
  const std::array<uint64_t, 5>& action_results() const { return action_results_; }

  // The Kind token of the subject action results travel on: events.<namespace>.ActionResult.
  static constexpr std::string_view kActionResultKind = "ActionResult";

 private:
  bool apply_checked(const Delivery& d, ClusterModel& model);
  bool reject(const Delivery& d, RejectReason why, const std::string& message,
              const ClusterModel& model);
  bool apply_object(const Delivery& d, const bus::ParsedSubject& at, int type, std::string json,
                    wire::EventTime time, ClusterModel& model);
  // An object checked and decoded from an object event; nullopt when it was dead-lettered.
  std::optional<KubeObject> decode_object(const Delivery& d, const bus::ParsedSubject& at, int type,
                                          std::string json, ClusterModel& model);
  bool apply_submission(const Delivery& d, const bus::ParsedSubject& at, int type, std::string json,
                        wire::EventTime stated, ClusterModel& model);
  bool apply_metrics(const Delivery& d, const bus::ParsedSubject& at, ClusterModel& model);
  bool apply_action_result(const Delivery& d, const bus::ParsedSubject& at, ClusterModel& model);

  bus::Subjects subjects_;
  std::string source_;
  WorkloadInterpreter* interpreter_ = nullptr;
  ObjectDecoder decoder_;
  v1::Event event_;            // reused: protobuf keeps its buffers across Clear()
  std::string_view event_id_;  // of the message being applied, for its dead letter
  std::vector<std::pair<bus::Message, uint64_t>> deadletters_;
  std::array<telemetry::Counter*, 4> applied_{};  // object, metrics, tick, submission
  std::array<telemetry::Counter*, static_cast<int>(RejectReason::kCount)> rejected_{};
  std::array<uint64_t, 5> action_results_{};
  bool has_result_ = false;
  std::array<telemetry::Counter*, 5> action_result_counters_{};
};

}  // namespace gpuaas::core
