// plugins: the workload plugins the daemon loaded, and the libraries it refused, by request-reply.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "table.hpp"

namespace gpuaas::ctl {

int show_plugins(const CtlContext& ctx, bool as_json) {
  auto reply = ctx.ask("plugins");
  if (!reply) return fail(reply.status());
  if (as_json) {
    std::cout << *reply << "\n";
    return kExitOk;
  }
  auto s = nlohmann::json::parse(*reply, nullptr, false);
  if (s.is_discarded()) return fail(Status::internal("the daemon's answer is not JSON"));
  std::vector<std::vector<std::string>> rows = {{"NAME", "VERSION", "STATUS", "KINDS", "STATE"}};
  for (const auto& p : s["plugins"]) {
    std::string kinds;
    for (const auto& k : p["kinds"]) {
      if (!kinds.empty()) kinds += ",";
      kinds += text(k["kind"]) + "." + text(k["api_version"]);
    }
    rows.push_back({text(p["name"]), text(p["version"]), text(p["status"]), kinds,
                    p.value("disabled", false) ? "Disabled" : "Loaded"});
  }
  table(rows);
  if (!s["refused"].empty()) {
    std::cout << "\nREFUSED\n";
    rows = {{"LIBRARY", "REASON"}};
    for (const auto& r : s["refused"]) rows.push_back({text(r["path"]), text(r["reason"])});
    table(rows);
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
