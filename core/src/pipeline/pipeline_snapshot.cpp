// The pipeline in a snapshot. The policy travels as its PolicySet text and is parsed again on
// load, so every stage starts from the same policy objects it had (set_policy), then each
// stage reads its own part: admission (with the engine), idle reclaim, scale-out, cost.
// Per-event state (output, decision ids, pending decisions) is empty between events and is not
// written.
#include "gpuaas/base/archive.hpp"
#include "pipeline/pipeline_stages.hpp"

namespace gpuaas::core {

void DecisionPipeline::save_state(base::ArchiveWriter& w) const {
  const Stages& s = *stages_;
  w(s.policy_text);
  if (!s.admission.active()) return;
  s.admission.save_state(w);
  s.reclaim.save_state(w);
  s.scale_out.save_state(w);
  s.cost.save_state(w);
}

void DecisionPipeline::load_state(base::ArchiveReader& r) {
  Stages& s = *stages_;
  r(s.policy_text);
  if (!r.ok() || s.policy_text.empty()) return;
  std::string error;
  auto set = Stages::parse_policy(s.policy_text, &error);
  if (!set) {
    r.fail("the snapshot's policy set does not load: " + error);
    return;
  }
  s.set_policy(*set);
  s.admission.load_state(r, set);
  if (!r.ok()) return;
  s.reclaim.load_state(r);
  s.scale_out.load_state(r);
  s.cost.load_state(r);
}

}  // namespace gpuaas::core
