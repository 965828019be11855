// The kinds the simulator can play, by name. Each model lives in its own kinds_*.cpp file.
#include "gpuaas/sim/kind_model.hpp"

#include <array>

#include "kinds_common.hpp"

namespace gpuaas::sim {
namespace {

const std::array<const KindModel*, 6>& models() {
  static const std::array<const KindModel*, 6> all = {
      &kinds::pytorch_job_model(),       &kinds::ray_cluster_model(), &kinds::ray_job_model(),
      &kinds::inference_service_model(), &kinds::notebook_model(),    &kinds::batch_job_model()};
  return all;
}

}  // namespace

std::map<std::string, std::string> KindModel::pod_labels(const nlohmann::json&,
                                                         std::string_view) const {
  return {};
}

bool scaled_to_zero(const nlohmann::json& object) {
  const nlohmann::json* a = kinds::find(object, "/metadata/annotations");
  return a != nullptr && a->is_object() && a->contains("gpuaas.io/scaled-from");
}

const KindModel* kind_model(std::string_view kind) {
  for (const KindModel* m : models()) {
    if (m->kind() == kind) return m;
  }
  return nullptr;
}

std::vector<std::string> known_kinds() {
  std::vector<std::string> out;
  for (const KindModel* m : models()) out.emplace_back(m->kind());
  return out;
}

}  // namespace gpuaas::sim
