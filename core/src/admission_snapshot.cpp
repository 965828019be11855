// AdmissionController in a snapshot. The policy travels as its PolicySet text and is parsed
// again on load, so every part starts from the same policy objects it had (set_policy), and then
// takes its own state on top. Per-event fields (output, decision ids, pending decisions) are
// empty between events and are not written.
#include <spdlog/spdlog.h>

#include "admission_output.hpp"
#include "gpuaas/base/archive.hpp"
#include "gpuaas/core/admission_controller.hpp"

namespace gpuaas::core {

void AdmissionController::save_state(base::ArchiveWriter& w) const {
  const Impl& s = *impl_;
  w(s.policy_text, s.first_seen, s.admitted, s.queued, s.managed_pods, s.managed_requests,
    s.next_reclaim, s.samples_seen, s.gate_candidates, s.gated, s.max_wait_reported,
    s.admit_requests, s.reissue);
  if (!s.scheduler) return;
  s.scheduler->save_state(w);
  s.book.save_state(w);
  s.scaler.save_state(w);
  s.accounting.save_state(w);
}

void AdmissionController::load_state(base::ArchiveReader& r) {
  Impl& s = *impl_;
  r(s.policy_text, s.first_seen, s.admitted, s.queued, s.managed_pods, s.managed_requests,
    s.next_reclaim, s.samples_seen, s.gate_candidates, s.gated, s.max_wait_reported,
    s.admit_requests, s.reissue);
  if (!r.ok() || s.policy_text.empty()) return;
  std::string error;
  auto set = Impl::parse_policy(s.policy_text, &error);
  if (!set) {
    r.fail("the snapshot's policy set does not load: " + error);
    return;
  }
  s.scheduler = std::make_unique<admission::Scheduler>(set);
  s.book.set_policy(*set);
  s.scaler.set_policy(*set);
  s.accounting.set_policy(*set);
  s.scheduler->load_state(r);
  s.book.load_state(r);
  s.scaler.load_state(r);
  s.accounting.load_state(r);
}

}  // namespace gpuaas::core
