#include "cost/cost_stage.hpp"

namespace gpuaas::core {

void CostStage::after_event(const std::vector<ModelChange>& changes, ClusterModel& model,
                            const admission::Scheduler& engine,
                            const std::map<std::string, int64_t>& coming_gpus,
                            bool watch_reservations, bool decided,
                            const std::vector<std::string>& touched,
                            const std::vector<Served>& served) {
  for (const auto& ch : changes) {
    if (ch.category == ModelChange::Category::kNode) accounting_.node_changed(ch.key);
    if (ch.category == ModelChange::Category::kPod) accounting_.pod_changed(ch.key);
  }
  if (decided) accounting_.decided();
  for (const auto& s : served) accounting_.served(model, engine, s);
  accounting_.update(model, engine, coming_gpus, watch_reservations, touched);
}

}  // namespace gpuaas::core
