#include "pages.hpp"

#include <iostream>

namespace gpuaas::ctl {

int walk_pages(const CtlContext& ctx, PageWalk w,
               const std::function<void(const nlohmann::json& page)>& on_page) {
  w.request["view"] = "page";
  w.request["limit"] = w.limit ? w.limit : 500;
  // A bound on pages: a cursor that never advanced would otherwise loop.
  for (int pages = 0; pages < 1'000'000; ++pages) {
    if (!w.after.empty()) w.request["after"] = w.after;
    auto a = ctx.ask_answer(w.endpoint, w.request.dump());
    if (!a) return fail(a.status());
    if (a->error) return fail_answer(*a, w.as_json);
    if (w.as_json) std::cout << a->raw << "\n";
    on_page(a->body);
    const auto& next = at(a->body, {"next"});
    if (!next.is_string() || next.get<std::string>() == w.after) break;
    w.after = next.get<std::string>();
    if (w.limit) {
      std::cerr << "more: " << w.command << " --limit " << w.limit << " --after " << w.after
                << "\n";
      break;
    }
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
