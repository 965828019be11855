// state: the daemon's model, by request-reply.
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>

#include "answer.hpp"
#include "commands.hpp"
#include "pages.hpp"
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

// The summary gpuaasd answers when the whole state does not fit one reply.
void print_summary(const json& s) {
  std::cout << "CLOCK " << text(at(s, {"clock"})) << "   EVENTS APPLIED "
            << text(at(s, {"intake", "events_applied"})) << "   DEAD-LETTERED "
            << text(at(s, {"intake", "deadlettered"})) << "\n\nNODES "
            << text(at(s, {"nodes", "total"})) << " (" << text(at(s, {"nodes", "ready"}))
            << " ready, " << text(at(s, {"nodes", "unschedulable"})) << " unschedulable)   GPUS "
            << text(at(s, {"gpus", "capacity"})) << " capacity, "
            << text(at(s, {"gpus", "allocatable"})) << " allocatable, "
            << text(at(s, {"gpus", "requested"})) << " requested\n\nGPUS BY FLAVOR\n";
  std::vector<std::vector<std::string>> rows = {
      {"FLAVOR", "NODES", "READY", "CAPACITY", "ALLOCATABLE", "REQUESTED"}};
  for (const auto& [name, p] : object(s, {"gpus_by_flavor"}).items()) {
    rows.push_back({name, text(at(p, {"nodes"})), text(at(p, {"ready_nodes"})),
                    text(at(p, {"capacity"})), text(at(p, {"allocatable"})),
                    text(at(p, {"requested"}))});
  }
  table(rows);
  std::cout << "\nWORKLOADS " << text(at(s, {"workloads", "total"})) << " in "
            << text(at(s, {"workloads", "namespaces"})) << " namespaces:";
  for (const auto& [state, n] : object(s, {"workloads", "by_state"}).items())
    std::cout << " " << state << " " << text(n);
  std::cout << "\nPODS " << text(at(s, {"pods", "total"})) << " ("
            << text(at(s, {"pods", "running"})) << " running)   METRIC SERIES "
            << text(at(s, {"metrics", "series"})) << "\n";
  if (!at(s, {"bytes_needed"}).is_null())
    std::cout << "\nThe whole state is " << text(at(s, {"bytes_needed"}))
              << " bytes, more than one reply holds (max_payload " << text(at(s, {"max_payload"}))
              << "): this is its summary. By pages:\n"
              << "  gpuaasctl state --nodes [--flavor F] [--limit N --after NAME]\n"
              << "  gpuaasctl state --workloads [-n NS] [--limit N --after KEY]\n";
}

void page_rows(const std::string& section, const json& items,
               std::vector<std::vector<std::string>>& rows) {
  for (const auto& x : items) {
    if (section == "nodes") {
      rows.push_back({text(at(x, {"name"})), flag(at(x, {"ready"})) ? "True" : "False",
                      text(at(x, {"gpu_product"})), text(at(x, {"gpus", "capacity"})),
                      text(at(x, {"gpus", "allocatable"})), text(at(x, {"gpus", "requested"}))});
    } else {
      rows.push_back({text(at(x, {"namespace"})), text(at(x, {"kind"})), text(at(x, {"name"})),
                      text(at(x, {"queue"})), text(at(x, {"state"})),
                      text(at(x, {"demand", "gpus"})), std::to_string(list(x, {"pods"}).size())});
    }
  }
}

// Pages of one section: one page with --limit, else every page to the end.
int show_pages(const CtlContext& ctx, const StateOptions& o) {
  const std::string section = o.nodes || !o.flavor.empty() ? "nodes" : "workloads";
  std::vector<std::vector<std::string>> rows;
  if (section == "nodes")
    rows = {{"NAME", "READY", "GPU PRODUCT", "GPUS", "ALLOCATABLE", "REQUESTED"}};
  else
    rows = {{"NAMESPACE", "KIND", "NAME", "QUEUE", "STATE", "GPUS", "PODS"}};
  json req = {{"section", section}};
  if (!o.ns.empty()) req["namespace"] = o.ns;
  if (!o.flavor.empty()) req["flavor"] = o.flavor;
  const int rc =
      walk_pages(ctx, {"state", req, o.limit, o.after, o.json, "gpuaasctl state --" + section},
                 [&](const json& page) { page_rows(section, list(page, {"items"}), rows); });
  if (rc == kExitOk && !o.json) table(rows);
  return rc;
}

}  // namespace

int show_state(const CtlContext& ctx, const StateOptions& o) {
  if (o.nodes || o.workloads || o.limit || !o.after.empty() || !o.ns.empty() || !o.flavor.empty())
    return show_pages(ctx, o);
  // --json alone keeps the whole answer (or its error); the text view falls back to the summary.
  const std::string body = o.summary ? R"({"view":"summary"})"
                           : o.json  ? "{}"
                                     : R"({"view":"auto"})";
  auto a = ctx.ask_answer("state", body);
  if (!a) return fail(a.status());
  if (a->error) return fail_answer(*a, o.json);
  if (o.json) {
    std::cout << a->raw << "\n";
    return kExitOk;
  }
  if (at(a->body, {"complete"}) == false) {
    print_summary(a->body);
  } else {
    print_human(a->body);
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
