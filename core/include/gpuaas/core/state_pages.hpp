// The state answer for clusters whose whole state does not fit one NATS reply: a summary of a
// fixed size, and pages of nodes or workloads by cursor (the last item's key), each a whole JSON
// document within the reply's budget. Documented in docs/cli.md (state).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/intake_stats.hpp"

namespace gpuaas::core {

struct StateRequest {
  // kFull: the whole answer (an empty body or "{}"); kAuto: the whole answer when it fits, else
  // the summary; kSummary; kPage: one page of `section`.
  enum class View { kFull, kAuto, kSummary, kPage } view = View::kFull;
  std::string section;      // page: "nodes" or "workloads"
  std::size_t limit = 500;  // items per page, 1 to 5000
  std::string after;        // the cursor: the last key of the previous page
  std::string namespace_;   // workloads of one namespace only
  std::string flavor;       // nodes of one GPU product only
};

// "" and "{}" ask for the whole answer; anything else is a JSON object of the request's fields
// ({"view": "page", "section": "nodes", "limit": 100, "after": "node-7"}); errors name the field.
Result<StateRequest> parse_state_request(std::string_view body);

// Counts only: nodes, GPUs, workloads by state, pods, ClusterQueues; the node pools in full.
std::string render_state_summary(const ClusterModel& model, const IntakeStats& stats,
                                 const std::string& node_pools_json);

// {"section", "items", "next"}: at most `limit` items after the cursor and, dumped, at most
// `budget` bytes; "next" is the cursor of the page after (null at the end). An item alone over
// the budget is an error answer naming it.
std::string render_state_page(const ClusterModel& model, const StateRequest& request,
                              std::size_t budget);

}  // namespace gpuaas::core
