// plugins: the workload plugins the daemon loaded, and the libraries it refused, by request-reply.
#include <iostream>
#include <nlohmann/json.hpp>

#include "answer.hpp"
#include "commands.hpp"
#include "table.hpp"

namespace gpuaas::ctl {

int show_plugins(const CtlContext& ctx, bool as_json) {
  auto a = ctx.ask_answer("plugins");
  if (!a) return fail(a.status());
  if (a->error) return fail_answer(*a, as_json);
  if (as_json) {
    std::cout << a->raw << "\n";
    return kExitOk;
  }
  const auto& s = a->body;
  std::vector<std::vector<std::string>> rows = {{"NAME", "VERSION", "STATUS", "KINDS", "STATE"}};
  for (const auto& p : list(s, {"plugins"})) {
    std::string kinds;
    for (const auto& k : list(p, {"kinds"})) {
      if (!kinds.empty()) kinds += ",";
      kinds += text(at(k, {"kind"})) + "." + text(at(k, {"api_version"}));
    }
    rows.push_back({text(at(p, {"name"})), text(at(p, {"version"})), text(at(p, {"status"})), kinds,
                    flag(at(p, {"disabled"})) ? "Disabled" : "Loaded"});
  }
  table(rows);
  if (!list(s, {"refused"}).empty()) {
    std::cout << "\nREFUSED\n";
    rows = {{"LIBRARY", "REASON"}};
    for (const auto& r : list(s, {"refused"}))
      rows.push_back({text(at(r, {"path"})), text(at(r, {"reason"}))});
    table(rows);
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
