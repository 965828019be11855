#include "scaleout/scale_out_stage.hpp"

#include "pipeline/decision_sink.hpp"

namespace gpuaas::core {

ScaleOutStage::Outcome ScaleOutStage::pass(const ClusterModel& model, admission::Scheduler& engine,
                                           const std::set<std::string>& waking,
                                           std::vector<admission::NodeDemand> serving,
                                           DecisionSink& sink) {
  auto out = scaler_.pass(model, engine, waking, model.now(), std::move(serving));
  Outcome o;
  for (auto& a : out.actions) {
    if (a.target().kind() == "Node") o.cordoned.push_back(a.target().name());
    sink.publish(std::move(a));
  }
  o.evictions = std::move(out.evictions);
  return o;
}

}  // namespace gpuaas::core
