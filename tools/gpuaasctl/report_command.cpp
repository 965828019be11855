// report: where the GPUs went and what each outcome cost, per tenant (ClusterQueue) and project
// (namespace), from the daemon's ledger: the same numbers /metrics exports.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "answer.hpp"
#include "commands.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "pages.hpp"
#include "table.hpp"

namespace gpuaas::ctl {
namespace {

std::string fixed(const nlohmann::json& v, int digits) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>());
  return buf;
}

std::vector<std::string> row(const std::string& tenant, const std::string& project,
                             const nlohmann::json& x) {
  return {tenant,
          project,
          fixed(at(x, {"gpu_hours", "allocated"}), 2),
          fixed(at(x, {"gpu_hours", "busy"}), 2),
          fixed(at(x, {"gpu_hours", "idle_reserved"}), 2),
          fixed(at(x, {"outcomes", "total"}), 0),
          fixed(at(x, {"cost", "allocated"}), 2),
          fixed(at(x, {"cost", "idle_reserved"}), 2),
          fixed(at(x, {"cost", "total"}), 2),
          fixed(at(x, {"cost_per_outcome"}), 4)};
}

}  // namespace

int show_report(const CtlContext& ctx, const ReportOptions& o) {
  std::string window;
  if (!o.since.empty()) {
    auto d = policy::parse_duration(o.since);
    if (!d)
      return fail(
          Status::invalid("--since " + o.since + ": not a duration (e.g. 1h, 30m, 7d as 168h)"));
    window = std::to_string(d->count());
  }
  // --json alone: the whole report (or its error). Otherwise tenants come by pages, so any
  // number of them fits: every page, or one with --limit.
  if (o.json && !o.limit && o.after.empty()) {
    auto a = ctx.ask_answer("report", window);
    if (!a) return fail(a.status());
    if (a->error) return fail_answer(*a, true);
    std::cout << a->raw << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{{"TENANT", "PROJECT", "ALLOCATED", "BUSY",
                                              "IDLE-RESERVED", "OUTCOMES", "COST", "RESERVED-COST",
                                              "TOTAL", "PER-OUTCOME"}};
  nlohmann::json req = nlohmann::json::object();
  if (!window.empty()) req["since"] = std::stoull(window);
  nlohmann::json head;
  const int rc =
      walk_pages(ctx, {"report", req, o.limit, o.after, o.json, "gpuaasctl report"},
                 [&](const nlohmann::json& page) {
                   if (head.is_null()) head = page;
                   // A tenant's scoped report is whole: its tenants are in "tenants", not "items".
                   const auto& items =
                       page.contains("items") ? list(page, {"items"}) : list(page, {"tenants"});
                   for (const auto& t : items) {
                     const std::string name = text(at(t, {"tenant"}));
                     const std::string tenant = name.empty() || name == "-" ? "(no queue)" : name;
                     rows.push_back(row(tenant, "*", t));
                     if (o.projects)
                       for (const auto& p : list(t, {"projects"}))
                         rows.push_back(row(tenant, text(at(p, {"namespace"})), p));
                   }
                 });
  if (rc != kExitOk) return rc;
  if (o.json) return kExitOk;
  const std::string cur = text(at(head, {"currency"}));
  std::cout << "From " << text(at(head, {"from"})) << " to " << text(at(head, {"to"}))
            << " (event time), GPU-hours and " << cur << "\n";
  table(rows);
  const auto& c = at(head, {"cluster"});
  std::cout << "\nCluster: " << fixed(at(c, {"capacity_gpu_hours"}), 2)
            << " GPU-hours of capacity, cost " << fixed(at(c, {"cost"}), 2) << " " << cur
            << ", idle (charged to nobody) " << fixed(at(c, {"idle_cost"}), 2) << " " << cur
            << "\n";
  std::vector<std::vector<std::string>> flavors{
      {"FLAVOR", "GPU-HOUR PRICE", "SOURCE", "CAPACITY", "COST", "IDLE COST"}};
  for (const auto& f : list(c, {"flavors"})) {
    const std::string name = text(at(f, {"flavor"}));
    flavors.push_back({name.empty() || name == "-" ? "(unknown)" : name,
                       fixed(at(f, {"gpu_hour_price"}), 4), text(at(f, {"price_source"})),
                       fixed(at(f, {"capacity_gpu_hours"}), 2), fixed(at(f, {"cost"}), 2),
                       fixed(at(f, {"idle_cost"}), 2)});
  }
  if (flavors.size() > 1) table(flavors);
  for (const auto& n : list(c, {"price_notes"}))
    std::cout << "Price not used: node " << text(at(n, {"node"})) << " (" << text(at(n, {"source"}))
              << "): " << text(at(n, {"refused"})) << "\n";
  std::vector<std::vector<std::string>> services{
      {"SERVICE", "TENANT", "OUTCOMES", "GPU-HOURS", "COST", "PER-OUTCOME"}};
  for (const auto& x : list(head, {"services"})) {
    services.push_back({text(at(x, {"namespace"})) + "/" + text(at(x, {"service"})),
                        text(at(x, {"tenant"})), fixed(at(x, {"outcomes"}), 0),
                        fixed(at(x, {"gpu_hours_charged"}), 2), fixed(at(x, {"cost"}), 2),
                        fixed(at(x, {"cost_per_outcome"}), 6)});
  }
  if (services.size() > 1) {
    std::cout
        << "\nServices (outcomes: requests within their ServiceObjective, latency and quality):\n";
    table(services);
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
