// The pipeline in a snapshot. The policy travels as its PolicySet text and is parsed again on
// load, so every stage starts from the same policy objects it had (set_policy), then takes its
// own state on top. Schema 3 writes each stage's part in turn: admission (its fields, then the
// engine), idle reclaim (its fields, then the book), scale-out, cost; schema 4 adds the serving
// capacity stage and the cost of each service after them. Schema 2, written before
// the stages, had the admission and reclaim fields in one list; it is still read, so that an
// upgrade resumes from the last snapshot instead of replaying the stream. Per-event state
// (output, decision ids, pending decisions) is empty between events and is not written.
#include "gpuaas/base/archive.hpp"
#include "pipeline/pipeline_stages.hpp"

namespace gpuaas::core {
namespace {

template <typename S, typename A>
void stage_fields(S& s, A& a, uint32_t schema) {
  if (schema == 2) {
    AdmissionStage::queue_fields(s.admission, a);
    ReclaimStage::pass_fields(s.reclaim, a);
    AdmissionStage::conflict_fields(s.admission, a);
    return;
  }
  AdmissionStage::queue_fields(s.admission, a);
  AdmissionStage::conflict_fields(s.admission, a);
}

}  // namespace

void DecisionPipeline::save_state(base::ArchiveWriter& w, uint32_t schema) const {
  const Stages& s = *stages_;
  w(s.policy_text);
  if (schema == 2) {
    stage_fields(s, w, schema);  // written whether or not a policy is in force
    if (!s.admission.active()) return;
    s.admission.save_engine(w);
  } else {
    if (!s.admission.active()) return;
    stage_fields(s, w, schema);
    s.admission.save_engine(w);
    ReclaimStage::pass_fields(s.reclaim, w);
  }
  s.reclaim.save_book(w);
  s.scale_out.save_state(w);
  s.cost.save_state(w);
  if (schema >= 4) {
    s.capacity.save_state(w);
    s.cost.save_services(w);
  }
}

void DecisionPipeline::load_state(base::ArchiveReader& r, uint32_t schema) {
  Stages& s = *stages_;
  r(s.policy_text);
  if (schema == 2) stage_fields(s, r, schema);
  if (!r.ok() || s.policy_text.empty()) return;
  std::string error;
  auto set = Stages::parse_policy(s.policy_text, &error);
  if (!set) {
    r.fail("the snapshot's policy set does not load: " + error);
    return;
  }
  s.set_policy(*set);
  if (schema != 2) stage_fields(s, r, schema);
  s.admission.load_engine(r, set);
  if (schema != 2) ReclaimStage::pass_fields(s.reclaim, r);
  if (!r.ok()) return;
  s.reclaim.load_book(r);
  s.scale_out.load_state(r);
  s.cost.load_state(r);
  if (schema >= 4) {
    s.capacity.load_state(r);
    s.cost.load_services(r);
  }
}

}  // namespace gpuaas::core
