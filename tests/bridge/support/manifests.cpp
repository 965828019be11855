#include "manifests.hpp"

#include <yaml-cpp/yaml.h>

#include <regex>
#include <stdexcept>

namespace gpuaas::bridge {
namespace {

nlohmann::json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = ToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() != "?") return text;  // quoted: a string whatever it looks like
      static const std::regex kInt("[-+]?[0-9]+");
      static const std::regex kFloat("[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      if (text == "null" || text == "~" || text.empty()) return nullptr;
      if (std::regex_match(text, kInt)) return std::stoll(text);
      if (std::regex_match(text, kFloat)) return std::stod(text);
      return text;
    }
    default:
      return nullptr;
  }
}

}  // namespace

std::vector<nlohmann::json> load_manifest_file(const std::string& full) {
  std::vector<nlohmann::json> out;
  for (const auto& doc : YAML::LoadAllFromFile(full)) {
    if (doc.IsMap()) out.push_back(ToJson(doc));
  }
  return out;
}

nlohmann::json find_kind(const std::vector<nlohmann::json>& docs, const std::string& kind,
                         const std::string& path) {
  for (const auto& doc : docs) {
    if (doc.value("kind", "") == kind) return doc;
  }
  throw std::runtime_error("no " + kind + " in " + path);
}

}  // namespace gpuaas::bridge
