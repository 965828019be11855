// The pipeline's other read-only views: queues (gpuaasctl state), pools (gpuaasctl pools), the
// cost report (gpuaasctl report) and the gauges refreshed before a scrape.
#include <nlohmann/json.hpp>

#include "gpuaas/base/quantity.hpp"
#include "pipeline/pipeline_stages.hpp"

namespace gpuaas::core {

using nlohmann::json;

std::string DecisionPipeline::pools_json(const ClusterModel& model) const {
  return stages_->scale_out.scaler().json(model.now());
}

std::string DecisionPipeline::queues_json(const ClusterModel&) const {
  json out = json::array();
  if (!stages_->admission.active()) return out.dump();
  for (const auto& q : stages_->admission.engine().cluster_queue_usage()) {
    json res = json::array();
    for (const auto& r : q.resources)
      res.push_back({{"flavor", r.flavor},
                     {"resource", r.resource},
                     {"nominal", format_milli(r.nominal_milli)},
                     {"usage", format_milli(r.usage_milli)}});
    out.push_back({{"name", q.name},
                   {"cohort", q.cohort},
                   {"pending", q.pending},
                   {"admitted", q.admitted},
                   {"resources", std::move(res)}});
  }
  return out.dump();
}

void DecisionPipeline::refresh_metrics(const ClusterModel& model) const {
  if (!stages_->admission.active()) return;
  stages_->queue_metrics.refresh(stages_->admission.engine());
  stages_->cost.accounting().export_metrics(model.now());
  stages_->capacity.export_metrics(model.now());
}

std::string DecisionPipeline::report_json(const ClusterModel& model,
                                          std::optional<std::chrono::seconds> since) const {
  return stages_->cost.accounting().report_json(model.now(), since);
}

}  // namespace gpuaas::core
