#include "gpuaas/core/page_request.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace gpuaas::core {

using nlohmann::json;

Result<PageRequest> parse_page_request(std::string_view body, std::string_view endpoint,
                                       std::initializer_list<std::string_view> fields) {
  PageRequest r;
  if (body.empty() || body == "{}") return r;
  const std::string where = std::string(endpoint) + ": ";
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return Status::invalid(where + "the request is not a JSON object");
  static const std::map<std::string, PageRequest::View> kViews = {
      {"full", PageRequest::View::kFull},
      {"auto", PageRequest::View::kAuto},
      {"summary", PageRequest::View::kSummary},
      {"page", PageRequest::View::kPage}};
  for (const auto& [k, v] : j.items()) {
    if (std::find(fields.begin(), fields.end(), k) == fields.end()) {
      std::string known;
      for (auto f : fields) known += (known.empty() ? "" : ", ") + std::string(f);
      return Status::invalid(where + json(k).dump() + " is not a field (" + known + ")");
    }
    if (k == "limit" || k == "since") {
      const bool ok =
          v.is_number_unsigned() &&
          (k == "since" || (v.get<uint64_t>() >= 1 && v.get<uint64_t>() <= kMaxPageLimit));
      if (!ok)
        return Status::invalid(where + k + ": a whole number" +
                               (k == "limit" ? " from 1 to " + std::to_string(kMaxPageLimit) : ""));
      if (k == "limit")
        r.limit = v.get<std::size_t>();
      else
        r.since = v.get<uint64_t>();
      continue;
    }
    if (!v.is_string()) return Status::invalid(where + k + ": must be a string");
    const std::string text = v.get<std::string>();
    if (k == "view") {
      auto it = kViews.find(text);
      if (it == kViews.end())
        return Status::invalid(where + "view: one of full, auto, summary, page");
      r.view = it->second;
    } else if (k == "section") {
      r.section = text;
    } else if (k == "after") {
      r.after = text;
    } else if (k == "namespace") {
      r.namespace_ = text;
    } else {
      r.flavor = text;
    }
  }
  return r;
}

}  // namespace gpuaas::core
