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
#include "gpuaas/core/page_request.hpp"

namespace gpuaas::core {

// The state endpoint's request ({"view": "page", "section": "nodes", "limit": 100, "after":
// "node-7"}; page_request.hpp): a page is of nodes or workloads.
Result<PageRequest> parse_state_request(std::string_view body);

// Counts only: nodes, GPUs, workloads by state, pods, ClusterQueues; the node pools in full.
std::string render_state_summary(const ClusterModel& model, const IntakeStats& stats,
                                 const std::string& node_pools_json);

// {"section", "items", "next"}: at most `limit` items after the cursor and, dumped, at most
// `budget` bytes; "next" is the cursor of the page after (null at the end). An item alone over
// the budget is an error answer naming it.
std::string render_state_page(const ClusterModel& model, const PageRequest& request,
                              std::size_t budget);

}  // namespace gpuaas::core
