// state: the daemon's model, by request-reply.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "table.hpp"

namespace gpuaas::ctl {
namespace {

using nlohmann::json;

void print_human(const json& s) {
  std::vector<std::vector<std::string>> rows;
  if (s.contains("namespace")) {
    // A namespace's view (--scope): no nodes, no cluster-wide counters.
    std::cout << "CLOCK " << text(s["clock"]) << "   NAMESPACE " << text(s["namespace"]) << "\n";
  } else {
    const auto& in = s["intake"];
    std::cout << "CLOCK " << text(s["clock"]) << "   EVENTS APPLIED " << text(in["events_applied"])
              << "   DEAD-LETTERED " << text(in["deadlettered"]) << "\n\nNODES\n";
    rows = {{"NAME", "READY", "GPU PRODUCT", "GPUS", "ALLOCATABLE", "REQUESTED"}};
    for (const auto& n : s["nodes"]) {
      rows.push_back({text(n["name"]), n["ready"].get<bool>() ? "True" : "False",
                      text(n["gpu_product"]), text(n["gpus"]["capacity"]),
                      text(n["gpus"]["allocatable"]), text(n["gpus"]["requested"])});
    }
    table(rows);
  }
  std::cout << "\nGPUS BY FLAVOR\n";
  rows = {{"FLAVOR", "NODES", "READY", "CAPACITY", "ALLOCATABLE", "REQUESTED"}};
  for (const auto& [name, p] : s["gpus_by_flavor"].items()) {
    rows.push_back({name, text(p["nodes"]), text(p["ready_nodes"]), text(p["capacity"]),
                    text(p["allocatable"]), text(p["requested"])});
  }
  table(rows);
  if (s.contains("node_pools") && s["node_pools"].is_array() && !s["node_pools"].empty()) {
    std::cout << "\nNODE POOLS\n";
    rows = {{"NAME", "FLAVOR", "READY", "COMING", "MIN", "MAX", "LAUNCHED", "FAILED", "LAST PLAN"}};
    for (const auto& p : s["node_pools"]) {
      const auto& n = p["nodes"];
      const int64_t coming = n["not_ready"].get<int64_t>() + n["asked"].get<int64_t>();
      std::string plan = text(p["plan"]["rule"]);
      if (plan.empty() || plan == "-") plan = "steady";
      rows.push_back({text(p["name"]), text(p["flavor"]), text(n["ready"]), std::to_string(coming),
                      text(p["min_nodes"]), text(p["max_nodes"]), text(p["nodes_launched"]),
                      text(p["provisioning_failures"]), plan});
    }
    table(rows);
  }
  std::cout << "\nWORKLOADS\n";
  rows = {{"NAMESPACE", "KIND", "NAME", "QUEUE", "STATE", "GPUS", "PODS"}};
  for (const auto& w : s["workloads"]) {
    std::string gpus = w.contains("demand") ? text(w["demand"]["gpus"]) : "-";
    rows.push_back({text(w["namespace"]), text(w["kind"]), text(w["name"]), text(w["queue"]),
                    text(w["state"]), gpus, std::to_string(w["pods"].size())});
  }
  table(rows);
  std::cout << "\nPODS " << text(s["pods"]["total"]) << " (" << text(s["pods"]["running"])
            << " running)   METRIC SERIES " << text(s["metrics"]["series"]) << "\n";
}

}  // namespace

int show_state(const CtlContext& ctx, bool as_json) {
  auto reply = ctx.ask("state");
  if (!reply) return fail(reply.status());
  if (as_json) {
    std::cout << *reply << "\n";
    return kExitOk;
  }
  json s = json::parse(*reply, nullptr, false);
  if (s.is_discarded()) return fail(Status::internal("the daemon's answer is not JSON"));
  print_human(s);
  return kExitOk;
}

}  // namespace gpuaas::ctl
