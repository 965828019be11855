// The policy set in force arrives as a PolicySet object in the event stream. It is validated as
// a whole; a bad one is refused and the running one stays. Admitted workloads keep their
// reservation across a reload.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "gpuaas/policy/policy_loader.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pipeline/pipeline_stages.hpp"

namespace gpuaas::core {

using nlohmann::json;

const std::string& DecisionPipeline::Stages::policy_key() {
  static const std::string key = [] {
    ObjectMeta m;
    m.api_version = kPolicySetApiVersion;
    m.kind = kPolicySetKind;
    m.name = kPolicySetName;
    return ClusterModel::key_of(m);
  }();
  return key;
}

void DecisionPipeline::Stages::apply_policy(const KubeObject& obj, ClusterModel& model) {
  if (obj.json == policy_text) return;
  std::string error;
  auto set = parse_policy(obj.json, &error);
  if (!set) {
    refuse(error);
    return;
  }
  if (admission.set_policy(set,
                           std::chrono::time_point_cast<std::chrono::milliseconds>(model.now()))) {
    // Everything the model already holds enters the engine now.
    for (const auto& [name, n] : model.nodes()) upsert_node(model, name);
    for (const auto& [key, o] : model.workloads()) upsert_object(model, key, o);
  }
  set_policy(*set);
  policy_text = obj.json;
  if (reloads_applied) reloads_applied->Increment();
  spdlog::info(
      "policy in force: {} ClusterQueues, {} LocalQueues, {} ResourceFlavors from {} file(s)",
      set->cluster_queues.size(), set->local_queues.size(), set->flavors.size(), set->files.size());
}

void DecisionPipeline::Stages::set_policy(const policy::PolicySet& set) {
  reclaim.set_policy(set);
  binding.set_policy(set);
  scale_out.set_policy(set);
  capacity.set_policy(set);
  serving_scale.set_policy(set);
  cost.set_policy(set);
}

std::shared_ptr<const policy::PolicySet> DecisionPipeline::Stages::parse_policy(
    const std::string& text, std::string* error) {
  std::vector<std::pair<std::string, std::string>> texts;
  try {
    const json j = json::parse(text);
    for (const auto& f : j.at("spec").at("files")) texts.emplace_back(f.at("name"), f.at("text"));
  } catch (const std::exception& e) {
    *error = std::string("PolicySet object: ") + e.what();
    return nullptr;
  }
  auto loaded = policy::parse_policy_texts(texts);
  if (!loaded.ok()) {
    *error =
        loaded.errors.front().str() +
        (loaded.errors.size() > 1 ? " (and " + std::to_string(loaded.errors.size() - 1) + " more)"
                                  : "");
    return nullptr;
  }
  for (const auto& w : loaded.warnings)
    spdlog::warn("policy: {}: warning: {}", w.at.str(), w.message);
  return std::make_shared<const policy::PolicySet>(std::move(loaded.set));
}

void DecisionPipeline::Stages::refuse(const std::string& why) {
  spdlog::error("policy refused, the running one stays: {}", why);
  if (reloads_refused) reloads_refused->Increment();
}

}  // namespace gpuaas::core
