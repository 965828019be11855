// Answers by pages (state, explain, report): a page is asked by cursor and says the next one.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ctl_context.hpp"

namespace gpuaas::ctl {

struct PageWalk {
  const char* endpoint;    // "state", "explain", "report"
  nlohmann::json request;  // the endpoint's fields; "view", "limit" and "after" are set here
  std::size_t limit = 0;   // one page of this many; 0: every page, 500 each
  std::string after;       // the cursor to start after
  bool as_json = false;    // print each page's answer as it came, one per line
  std::string command;     // for the hint of the next page: "gpuaasctl state --nodes"
};

// Every page to the end, or one with a limit (the command for the next then on stderr); each
// page's body goes to `on_page`. Returns the exit code: the daemon's error, or unreachable.
int walk_pages(const CtlContext& ctx, PageWalk walk,
               const std::function<void(const nlohmann::json& page)>& on_page);

}  // namespace gpuaas::ctl
