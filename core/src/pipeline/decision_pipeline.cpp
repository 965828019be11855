// The order of the decisions after every event: policy, the model's changes fed to the stages,
// idle reclaim, admission's pass and its decisions, conflicts sent again (admission's, then the
// others'), pods bound to their nodes, the notebook gate, serving capacity (a measurement) and
// the serving scale it sizes, node scale-out (serving replicas still to come among its demand),
// cost. Each stage lives in its folder
// (admission/, reclaim/, scaleout/, cost/); what they decide leaves through the DecisionSink.
#include "gpuaas/core/decision_pipeline.hpp"

#include "admission/stage/admission_inputs.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pipeline/pipeline_stages.hpp"

namespace gpuaas::core {

DecisionPipeline::Stages::Stages(bus::Subjects subjects, std::string source,
                                 telemetry::Registry* registry, WorkloadInterpreter* interpreter)
    : queue_metrics(registry),
      sink(std::move(subjects), std::move(source), registry, interpreter, queue_metrics),
      retry(registry),
      admission(registry, queue_metrics),
      binding(registry),
      reclaim(registry, interpreter),
      scale_out(registry),
      capacity(registry),
      serving_scale(registry, interpreter),
      cost(registry) {
  sink.set_retry(&retry);
  sink.set_binding(&binding);
  if (!registry) return;
  auto& reloads = telemetry::BuildCounter()
                      .Name("gpuaas_policy_reloads_total")
                      .Help("Policy sets offered to the admission engine, by result.")
                      .Register(*registry);
  reloads_applied = &reloads.Add({{"result", "applied"}});
  reloads_refused = &reloads.Add({{"result", "refused"}});
}

DecisionPipeline::DecisionPipeline(bus::Subjects subjects, std::string source,
                                   telemetry::Registry* registry, WorkloadInterpreter* interpreter)
    : stages_(std::make_unique<Stages>(std::move(subjects), std::move(source), registry,
                                       interpreter)) {}

DecisionPipeline::~DecisionPipeline() = default;

void DecisionPipeline::refuse_policy(const std::string& why) { stages_->refuse(why); }
bool DecisionPipeline::active() const { return stages_->admission.active(); }
const std::string& DecisionPipeline::policy_text() const { return stages_->policy_text; }
std::vector<Outbound> DecisionPipeline::take_output() { return stages_->sink.take(); }
void DecisionPipeline::set_epoch(uint64_t epoch) { stages_->sink.set_epoch(epoch); }
void DecisionPipeline::action_result(const v1::ActionResult& result) {
  stages_->admission.action_result(result);
  stages_->retry.result(result, AdmissionStage::reissues(result.rule()));
}

void DecisionPipeline::after_event(ClusterModel& model, std::string_view event_id) {
  Stages& s = *stages_;
  s.sink.begin(event_id, model.now(), &model);
  const auto changes = model.take_changes();
  const std::string& kPolicyKey = Stages::policy_key();
  for (const auto& ch : changes) {
    if (ch.category == ModelChange::Category::kObject && ch.key == kPolicyKey &&
        ch.change != wire::ChangeType::kDeleted) {
      if (const KubeObject* o = model.object(ch.key)) s.apply_policy(*o, model);
    }
  }
  if (!s.admission.active()) {
    (void)model.take_touched_pods();  // nothing accounts before a policy: keep nothing
    return;
  }
  s.feed(changes, model);
  const auto hooks = s.hooks(model);
  if (s.reclaim.watching()) s.reclaim.pass(model, s.admission, s.sink, s.pending);
  auto decisions = std::exchange(s.pending, {});
  auto passed = s.admission.schedule(to_time(model.now()));
  decisions.insert(decisions.end(), std::make_move_iterator(passed.begin()),
                   std::make_move_iterator(passed.end()));
  s.admission.emit(model, std::move(decisions), s.sink, hooks);
  if (s.admission.reissue_pending()) s.admission.reissue_pass(model, s.sink, hooks);
  if (s.retry.pending()) s.retry.pass(model, s.sink);
  const auto late = s.binding.pass(
      model, s.sink,
      // Waits: queued and not running (adopted after a restart runs without an admission here).
      [&s](const std::string& w) {
        return s.admission.queued(w) && !s.admission.engine().running(w);
      },
      [&s, &model](const std::string& w) { return s.ensure_plan(model, w); });
  for (const auto& [w, why] : late) {
    // As Kueue's waitForPodsReady: the workload stops, its pods go, and it is placed again.
    if (auto d = s.admission.engine().evict(w, "placement/bindTimeout", why, to_time(model.now())))
      s.admission.emit(model, {std::move(*d)}, s.sink, hooks);
  }
  s.reclaim.gate(model, s.admission, s.sink);
  // Pods whose samples changed: serving replicas' scrapes (capacity), GPUs busy (cost).
  const auto touched = model.take_touched_pods();
  const auto served = s.capacity.after_event(touched, model, s.admission.engine());
  if (s.serving_scale.watching()) {
    s.serving_scale.served(served);
    s.serving_scale.pass(model, s.capacity, s.admission.engine(), s.reclaim, s.sink);
  }
  if (s.scale_out.due(model.now())) {
    auto out = s.scale_out.pass(model, s.admission.engine(), s.reclaim.waking(),
                                s.serving_scale.node_demand(), s.sink);
    for (const auto& node : out.cordoned) s.upsert_node(model, node);  // at once
    if (!out.evictions.empty()) s.admission.emit(model, std::move(out.evictions), s.sink, hooks);
  }
  s.cost.after_event(changes, model, s.admission.engine(), s.scale_out.coming_gpus(),
                     s.reclaim.watching(), !s.sink.empty(), touched, served);
}

}  // namespace gpuaas::core
