// What a request for an API answer by pages asks (state, explain, report): the view, the section,
// how many items after which cursor, and filters. Each endpoint names the fields it takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"

namespace gpuaas::core {

struct PageRequest {
  // kFull: the whole answer (an empty body or "{}"); kAuto: the whole answer when it fits, else
  // the summary; kSummary; kPage: one page.
  enum class View { kFull, kAuto, kSummary, kPage } view = View::kFull;
  std::string section;            // state: "nodes" or "workloads"
  std::size_t limit = 500;        // items per page, 1 to kMaxPageLimit
  std::string after;              // the cursor: the last key of the previous page
  std::string namespace_;         // one namespace only
  std::string flavor;             // nodes of one GPU product only
  std::optional<uint64_t> since;  // report: the last seconds of event time
};

inline constexpr std::size_t kMaxPageLimit = 5000;

// "" and "{}" ask for the whole answer; anything else is a JSON object whose fields are among
// `fields` (view, section, limit, after, namespace, flavor, since). Errors name the endpoint and
// the field.
Result<PageRequest> parse_page_request(std::string_view body, std::string_view endpoint,
                                       std::initializer_list<std::string_view> fields);

}  // namespace gpuaas::core
