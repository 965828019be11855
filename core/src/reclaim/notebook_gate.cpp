// Notebook gating: a notebook a NotebookPolicy gates runs only once admitted. One that started
// on its own is stopped (and queued meanwhile); one that waits longer than maxWait is reported
// once: log, metric, status event.
#include <spdlog/spdlog.h>

#include "admission/stage/admission_stage.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/decision_sink.hpp"
#include "reclaim/reclaim_stage.hpp"

namespace gpuaas::core {

void ReclaimStage::gate(const ClusterModel& model, const AdmissionStage& admission,
                        DecisionSink& sink) {
  const wire::EventTime now = model.now();
  const auto now_ms = std::chrono::time_point_cast<std::chrono::milliseconds>(now);
  for (const auto& key : std::exchange(gate_candidates_, {})) {
    const KubeObject* obj = model.object(key);
    const WorkloadView* v = model.view_of(key);
    const bool suspended =
        v && v->lifecycle && v->lifecycle->state() == v1::WorkloadLifecycle::SUSPENDED;
    if (!obj || !v || admission.admitted(key) || suspended || book_.holds_out(key)) continue;
    if (!book_.gate_of(*obj, v->session) || !admission.queued(key)) continue;
    v1::ActionRequest req;
    req.set_reason("held until admitted (NotebookPolicy gate)");
    wire::set_time(*req.mutable_time(), now);
    if (sink.publish(*obj, WorkloadAction::kSuspend, req, "notebook/gate", "")) {
      gated_.insert(key);
      if (actions_) actions_->Add({{"action", "Gate"}, {"rule", "NotebookPolicy"}}).Increment();
    }
  }
  // Every queued workload is looked at: only when some policy has a wait to watch, or each
  // event would cost a pass over the whole queue.
  if (!book_.any_max_wait()) return;
  for (const auto& key : admission.queued_keys()) {
    const KubeObject* obj = model.object(key);
    const WorkloadView* v = model.view_of(key);
    if (!obj || !v || admission.admitted(key) || max_wait_reported_.count(key)) continue;
    const policy::NotebookPolicy* nb = book_.gate_of(*obj, v->session);
    if (!nb || nb->max_wait.count() == 0) continue;
    const admission::Time* first = admission.first_seen(key);
    if (first == nullptr || now_ms - *first < nb->max_wait) continue;
    max_wait_reported_.insert(key);
    auto x = admission.engine().explain(key, now_ms);
    if (!x.known || x.state != "Pending") continue;
    x.reason = "MaxWaitExceeded";
    x.message = "waited longer than maxWait " + policy::format_duration(nb->max_wait) +
                " (NotebookPolicy " + nb->name + "): " + x.message;
    spdlog::warn("{} {}/{}: {}", obj->meta.kind, obj->meta.namespace_, obj->meta.name, x.message);
    if (actions_)
      actions_->Add({{"action", "MaxWaitExceeded"}, {"rule", "NotebookPolicy/" + nb->name}})
          .Increment();
    sink.publish_status(*obj, x);
  }
}

}  // namespace gpuaas::core
