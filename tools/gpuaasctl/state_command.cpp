// state: the daemon's model, by request-reply.
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>

#include "answer.hpp"
#include "commands.hpp"
#include "table.hpp"

namespace gpuaas::ctl {
namespace {

using nlohmann::json;

void print_human(const json& s) {
  std::vector<std::vector<std::string>> rows;
  if (s.contains("namespace")) {
    // A namespace's view (--scope): no nodes, no cluster-wide counters.
    std::cout << "CLOCK " << text(at(s, {"clock"})) << "   NAMESPACE " << text(at(s, {"namespace"}))
              << "\n";
  } else {
    std::cout << "CLOCK " << text(at(s, {"clock"})) << "   EVENTS APPLIED "
              << text(at(s, {"intake", "events_applied"})) << "   DEAD-LETTERED "
              << text(at(s, {"intake", "deadlettered"})) << "\n\nNODES\n";
    rows = {{"NAME", "READY", "GPU PRODUCT", "GPUS", "ALLOCATABLE", "REQUESTED"}};
    for (const auto& n : list(s, {"nodes"})) {
      rows.push_back({text(at(n, {"name"})), flag(at(n, {"ready"})) ? "True" : "False",
                      text(at(n, {"gpu_product"})), text(at(n, {"gpus", "capacity"})),
                      text(at(n, {"gpus", "allocatable"})), text(at(n, {"gpus", "requested"}))});
    }
    table(rows);
  }
  std::cout << "\nGPUS BY FLAVOR\n";
  rows = {{"FLAVOR", "NODES", "READY", "CAPACITY", "ALLOCATABLE", "REQUESTED"}};
  for (const auto& [name, p] : object(s, {"gpus_by_flavor"}).items()) {
    rows.push_back({name, text(at(p, {"nodes"})), text(at(p, {"ready_nodes"})),
                    text(at(p, {"capacity"})), text(at(p, {"allocatable"})),
                    text(at(p, {"requested"}))});
  }
  table(rows);
  if (!list(s, {"node_pools"}).empty()) {
    std::cout << "\nNODE POOLS\n";
    rows = {{"NAME", "FLAVOR", "READY", "COMING", "MIN", "MAX", "LAUNCHED", "FAILED", "LAST PLAN"}};
    for (const auto& p : list(s, {"node_pools"})) {
      const auto not_ready = integer(at(p, {"nodes", "not_ready"}));
      const auto asked = integer(at(p, {"nodes", "asked"}));
      const std::string coming =
          not_ready && asked && *not_ready < INT64_MAX / 2 && *asked < INT64_MAX / 2
              ? std::to_string(*not_ready + *asked)
              : "-";
      std::string plan = text(at(p, {"plan", "rule"}));
      if (plan.empty() || plan == "-") plan = "steady";
      rows.push_back({text(at(p, {"name"})), text(at(p, {"flavor"})),
                      text(at(p, {"nodes", "ready"})), coming, text(at(p, {"min_nodes"})),
                      text(at(p, {"max_nodes"})), text(at(p, {"nodes_launched"})),
                      text(at(p, {"provisioning_failures"})), plan});
    }
    table(rows);
  }
  std::cout << "\nWORKLOADS\n";
  rows = {{"NAMESPACE", "KIND", "NAME", "QUEUE", "STATE", "GPUS", "PODS"}};
  for (const auto& w : list(s, {"workloads"})) {
    rows.push_back({text(at(w, {"namespace"})), text(at(w, {"kind"})), text(at(w, {"name"})),
                    text(at(w, {"queue"})), text(at(w, {"state"})), text(at(w, {"demand", "gpus"})),
                    std::to_string(list(w, {"pods"}).size())});
  }
  table(rows);
  std::cout << "\nPODS " << text(at(s, {"pods", "total"})) << " ("
            << text(at(s, {"pods", "running"})) << " running)   METRIC SERIES "
            << text(at(s, {"metrics", "series"})) << "\n";
}

}  // namespace

int show_state(const CtlContext& ctx, bool as_json) {
  auto a = ctx.ask_answer("state");
  if (!a) return fail(a.status());
  if (a->error) return fail_answer(*a, as_json);
  if (as_json) {
    std::cout << a->raw << "\n";
    return kExitOk;
  }
  print_human(a->body);
  return kExitOk;
}

}  // namespace gpuaas::ctl
