#include "gpuaas/core/policy_set_object.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::core {

Result<std::string> policy_set_object(const std::vector<std::string>& files) {
  auto loaded = policy::load_policy_files(files);
  if (!loaded.ok()) {
    std::string all;
    for (const auto& e : loaded.errors) all += (all.empty() ? "" : "\n") + e.str();
    return Status::invalid(all);
  }
  nlohmann::json texts = nlohmann::json::array();
  for (const auto& f : loaded.set.files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back({{"name", f}, {"text", ss.str()}});
  }
  nlohmann::json obj = {{"apiVersion", kPolicySetApiVersion},
                        {"kind", kPolicySetKind},
                        {"metadata", {{"name", kPolicySetName}}},
                        {"spec", {{"files", std::move(texts)}}}};
  return obj.dump();
}

}  // namespace gpuaas::core
