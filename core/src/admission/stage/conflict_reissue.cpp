// A conflict means the object changed after the daemon decided. The decision stands: an
// admitted workload keeps its reserved quota, a preempted one has given its quota away. So the
// same patch is computed again from the version the model now has, and sent. Until a newer
// version has arrived it would conflict again, so it waits for one.
#include <spdlog/spdlog.h>

#include "admission/stage/admission_stage.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/decision_sink.hpp"

namespace gpuaas::core {

bool AdmissionStage::reissues(const std::string& rule) {
  return rule.rfind("admission/", 0) == 0 || rule.rfind("preemption/", 0) == 0 ||
         rule == "reclaim/lend";
}

void AdmissionStage::action_result(const v1::ActionResult& r) {
  if (r.outcome() != v1::ActionResult::CONFLICT || !reissues(r.rule())) return;
  ObjectMeta m;
  m.api_version = r.target().api_version();
  m.kind = r.target().kind();
  m.namespace_ = r.target().namespace_();
  m.name = r.target().name();
  const std::string key = ClusterModel::key_of(m);
  const bool admission = r.rule().rfind("admission/", 0) == 0;
  if (admitted_.count(key) == (admission ? 1u : 0u) && queued_.count(key))
    reissue_[key] = {r.rule(), r.resource_version()};
}

void AdmissionStage::reissue_pass(const ClusterModel& model, DecisionSink& sink,
                                  const Hooks& hooks) {
  for (auto it = reissue_.begin(); it != reissue_.end();) {
    const std::string& key = it->first;
    const auto& [rule, conflicted_rv] = it->second;
    const bool admission = rule.rfind("admission/", 0) == 0;
    const KubeObject* obj = model.object(key);
    auto req_it = admit_requests_.find(key);
    // Gone, or the decision was overtaken (preempted after its admission, admitted again after
    // its preemption): nothing to redo.
    if (obj == nullptr || admitted_.count(key) != (admission ? 1u : 0u) ||
        (admission && req_it == admit_requests_.end())) {
      it = reissue_.erase(it);
      continue;
    }
    if (obj->meta.resource_version == conflicted_rv) {
      ++it;
      continue;
    }
    spdlog::info("{} {}/{}: {} met a conflict at resourceVersion {}; patching again at {}",
                 obj->meta.kind, obj->meta.namespace_, obj->meta.name, rule, conflicted_rv,
                 obj->meta.resource_version);
    v1::ActionRequest req;
    if (admission) {
      req.ParseFromString(req_it->second.first);
      sink.publish(*obj, hooks.admit_action(key), req, rule, req_it->second.second);
    } else {
      req.set_reason("preempted (" + rule + "); patched again after a conflict");
      wire::set_time(*req.mutable_time(), model.now());
      sink.publish(*obj, WorkloadAction::kSuspend, req, rule, "");
    }
    it = reissue_.erase(it);
  }
}

}  // namespace gpuaas::core
