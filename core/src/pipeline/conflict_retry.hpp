// A 409 on any decision but admission's (which conflict_reissue.cpp redoes with its quota in
// mind): scale to zero, wake, the notebook gate, node scaling and drains. The decision stands, so
// the patch is computed again from the newer object, once the model holds one, and sent again;
// an action a stage made whole (no plugin patch) is sent again as it was. What was sent is kept
// until its result arrives, at most kMaxKept decisions; it is not in the snapshot (a conflict
// whose result arrives after a restart is logged, not redone). Private to gpuaas_core.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/v1/action.pb.h"
#include "gpuaas/v1/event.pb.h"

namespace gpuaas::telemetry {
class Counter;
class Registry;
}  // namespace gpuaas::telemetry

namespace gpuaas::core {

class DecisionSink;

class ConflictRetry {
 public:
  explicit ConflictRetry(telemetry::Registry* registry);

  // The sink sent a workload decision (the object's plugin patches, under `ids`) or a whole
  // action.
  void sent_patch(const std::vector<std::string>& ids, const KubeObject& obj, WorkloadAction action,
                  const v1::ActionRequest& req, const std::string& rule, const std::string& hint);
  void sent_whole(const v1::Action& action);
  // An ActionResult: a CONFLICT marks its decision to be redone; any other result forgets it.
  // `handled`: admission redoes this rule itself.
  void result(const v1::ActionResult& r, bool handled);
  bool pending() const { return !pending_.empty(); }
  // Sends again what met a conflict and whose object the model now holds at another version.
  void pass(const ClusterModel& model, DecisionSink& sink);

  static constexpr std::size_t kMaxKept = 4096;
  static constexpr int kMaxAttempts = 3;  // a decision that keeps conflicting is given up

 private:
  struct Sent {
    std::string key;  // "" for a whole action
    std::string resource_version;
    WorkloadAction action = WorkloadAction::kAdmit;
    std::string request;  // serialized ActionRequest
    std::string rule;
    std::string hint;
    v1::Action whole;
    int attempts = 1;
    std::string conflicted_rv;
  };
  void keep(const std::string& id, std::shared_ptr<Sent> s);

  int carry_attempts_ = 1;  // a decision sent again counts its earlier attempts
  uint64_t seq_ = 0;
  std::map<std::string, std::pair<uint64_t, std::shared_ptr<Sent>>> sent_;  // by decision id
  std::map<uint64_t, std::string> order_;                                   // oldest first
  std::map<std::string, std::shared_ptr<Sent>> pending_;  // by key (or decision id)
  telemetry::Counter* redone_ = nullptr;
  telemetry::Counter* given_up_ = nullptr;
};

}  // namespace gpuaas::core
