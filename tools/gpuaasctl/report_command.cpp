// report: where the GPUs went and what each outcome cost, per tenant (ClusterQueue) and project
// (namespace), from the daemon's ledger: the same numbers /metrics exports.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpuaas/policy/policy_set.hpp"
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
  const auto& h = x["gpu_hours"];
  const auto& o = x["outcomes"];
  return {tenant,
          project,
          fixed(h["allocated"], 2),
          fixed(h["busy"], 2),
          fixed(h["idle_reserved"], 2),
          fixed(o["total"], 0),
          fixed(x["cost"]["allocated"], 2),
          fixed(x["cost"]["idle_reserved"], 2),
          fixed(x["cost"]["total"], 2),
          fixed(x["cost_per_outcome"], 4)};
}

}  // namespace

int show_report(const CtlContext& ctx, const std::string& since, bool projects, bool as_json) {
  std::string window;
  if (!since.empty()) {
    auto d = policy::parse_duration(since);
    if (!d)
      return fail(
          Status::invalid("--since " + since + ": not a duration (e.g. 1h, 30m, 7d as 168h)"));
    window = std::to_string(d->count());
  }
  auto reply = ctx.ask("report", window);
  if (!reply) return fail(reply.status());
  auto r = nlohmann::json::parse(*reply, nullptr, false);
  if (r.is_discarded()) return fail(Status::internal("the daemon's answer is not JSON"));
  if (r.contains("error")) return fail(Status::invalid(text(r["error"])));
  if (as_json) {
    std::cout << *reply << "\n";
    return kExitOk;
  }
  const std::string cur = text(r["currency"]);
  std::cout << "From " << text(r["from"]) << " to " << text(r["to"]) << " (event time), GPU-hours"
            << " and " << cur << "\n";
  std::vector<std::vector<std::string>> rows{{"TENANT", "PROJECT", "ALLOCATED", "BUSY",
                                              "IDLE-RESERVED", "OUTCOMES", "COST", "RESERVED-COST",
                                              "TOTAL", "PER-OUTCOME"}};
  for (const auto& t : r["tenants"]) {
    const std::string tenant = text(t["tenant"]).empty() ? "(no queue)" : text(t["tenant"]);
    rows.push_back(row(tenant, "*", t));
    if (projects)
      for (const auto& p : t["projects"]) rows.push_back(row(tenant, text(p["namespace"]), p));
  }
  table(rows);
  const auto& c = r["cluster"];
  std::cout << "\nCluster: " << fixed(c["capacity_gpu_hours"], 2) << " GPU-hours of capacity, cost "
            << fixed(c["cost"], 2) << " " << cur << ", idle (charged to nobody) "
            << fixed(c["idle_cost"], 2) << " " << cur << "\n";
  std::vector<std::vector<std::string>> flavors{
      {"FLAVOR", "GPU-HOUR PRICE", "SOURCE", "CAPACITY", "COST", "IDLE COST"}};
  for (const auto& f : c["flavors"])
    flavors.push_back({text(f["flavor"]).empty() ? "(unknown)" : text(f["flavor"]),
                       fixed(f["gpu_hour_price"], 4), text(f["price_source"]),
                       fixed(f["capacity_gpu_hours"], 2), fixed(f["cost"], 2),
                       fixed(f["idle_cost"], 2)});
  if (flavors.size() > 1) table(flavors);
  return kExitOk;
}

}  // namespace gpuaas::ctl
