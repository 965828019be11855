#include "submission.hpp"

#include <nlohmann/json.hpp>

namespace gpuaas::core {

Result<std::string> submitted_object(const std::string& text, wire::EventTime stated) {
  using nlohmann::json;
  json obj = json::parse(text, nullptr, false);
  if (obj.is_discarded() || !obj.is_object()) return Status::invalid("object is not JSON");
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return Status::invalid("metadata: missing");
  obj.erase("status");
  for (const char* key :
       {"resourceVersion", "uid", "generation", "creationTimestamp", "deletionTimestamp",
        "deletionGracePeriodSeconds", "ownerReferences", "managedFields"})
    meta->erase(key);
  auto& annotations = (*meta)["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  annotations[kSubmittedAtAnnotation] = wire::format_rfc3339(stated);
  return obj.dump();
}

}  // namespace gpuaas::core
