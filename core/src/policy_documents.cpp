#include "gpuaas/core/policy_documents.hpp"

#include <yaml-cpp/yaml.h>

namespace gpuaas::core {
namespace {

std::string at(const std::string& file, const YAML::Mark& m) {
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

}  // namespace

Result<std::vector<PolicyDocument>> read_policy_documents(const std::vector<std::string>& files) {
  std::vector<PolicyDocument> out;
  for (const auto& file : files) {
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAllFromFile(file);
    } catch (const YAML::BadFile&) {
      return Status::invalid(file + ": cannot read the file");
    } catch (const YAML::Exception& e) {
      return Status::invalid(at(file, e.mark) + e.msg);
    }
    for (const auto& d : docs) {
      if (d.IsNull()) continue;
      if (!d.IsMap()) return Status::invalid(at(file, d.Mark()) + "a policy document is a mapping");
      PolicyDocument p{file, d.Mark().line + 1, {}, {}, {}, {}};
      for (auto [field, target] :
           {std::pair{"apiVersion", &p.api_version}, std::pair{"kind", &p.kind}}) {
        if (!d[field] || !d[field].IsScalar() || d[field].Scalar().empty()) {
          return Status::invalid(at(file, d.Mark()) + field + " is missing");
        }
        *target = d[field].Scalar();
      }
      const auto meta = d["metadata"];
      if (!meta || !meta.IsMap() || !meta["name"] || !meta["name"].IsScalar()) {
        return Status::invalid(at(file, d.Mark()) + "metadata.name is missing");
      }
      p.name = meta["name"].Scalar();
      if (meta["namespace"] && meta["namespace"].IsScalar())
        p.namespace_ = meta["namespace"].Scalar();
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace gpuaas::core
