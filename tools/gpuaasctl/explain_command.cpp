// explain: why a workload waits and when it may start, from the daemon's admission engine.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"

namespace gpuaas::ctl {
namespace {

std::string str(const nlohmann::json& j) {
  if (j.is_null()) return "-";
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

// Idle reclaim's view of the workload: where it stands and what holds its quota.
void print_reclaim(const nlohmann::json& r) {
  std::cout << "  Idle reclaim:    " << str(r["state"]) << " (" << str(r["rule"]) << ")\n";
  if (r.contains("quota")) {
    std::cout << "  Quota:           " << str(r["quota"]);
    if (r.contains("reserved_until")) std::cout << " until " << str(r["reserved_until"]);
    std::cout << "\n  At zero since:   " << str(r["at_zero_since"]) << ": " << str(r["reason"])
              << "\n";
  } else if (r.contains("idle_at")) {
    std::cout << "  Last activity:   " << str(r["last_activity"]) << " (" << str(r["evidence"])
              << ")\n  Idle at:         " << str(r["idle_at"]) << " (timeout "
              << str(r["timeout_seconds"]) << " s" << (r.value("learned", false) ? ", learned" : "")
              << ")\n";
  }
}

// Pods of an admitted workload that binding holds back, one line each.
void print_binding(const nlohmann::json& b) {
  for (const auto& p : b.value("refused", nlohmann::json::array())) {
    std::cout << "  Not bound:       pod " << str(p["pod"]);
    if (!p["node"].is_null()) std::cout << " (planned on " << str(p["node"]) << ")";
    std::cout << ": " << str(p["reason"]) << "\n";
  }
  if (b.contains("waiting"))
    std::cout << "  Waiting:         for " << b["waiting"].value("pods", 0) << " of "
              << b["waiting"].value("of", 0) << " pods before the gang opens\n";
}

}  // namespace

int explain(const CtlContext& ctx, const std::string& workload, bool as_json) {
  auto reply = ctx.ask("explain", workload);
  if (!reply) return fail(reply.status());
  auto x = nlohmann::json::parse(*reply, nullptr, false);
  if (x.is_discarded()) return fail(Status::internal("the daemon's answer is not JSON"));
  if (x.contains("error")) return fail(Status::not_found(str(x["error"])));
  if (as_json) {
    std::cout << *reply << "\n";
    return kExitOk;
  }
  const auto& w = x["workload"];
  std::cout << str(w["namespace"]) << "/" << str(w["name"]) << " (" << str(w["kind"])
            << "): " << str(x["state"]) << "\n";
  std::cout << "  Reason:          " << str(x["reason"]) << ": " << str(x["message"]) << "\n";
  if (!str(x["held_by"]).empty() && str(x["held_by"]) != "-")
    std::cout << "  Held back by:    " << str(x["held_by"]) << "\n";
  std::cout << "  ClusterQueue:    " << str(x["cluster_queue"]);
  if (!x["position"]["cluster_queue"].is_null())
    std::cout << " (position " << str(x["position"]["cluster_queue"]) << ")";
  std::cout << "\n  LocalQueue:      " << str(x["local_queue"]);
  if (!x["position"]["local_queue"].is_null())
    std::cout << " (position " << str(x["position"]["local_queue"]) << ")";
  std::cout << "\n  Priority:        " << str(x["priority"]) << "\n";
  const bool pending = str(x["state"]) == "Pending";
  if (pending || str(x["state"]) == "Admitted") {
    std::cout << (pending ? "  Estimated start: " : "  Admitted at:     ")
              << (x["estimated_start"].is_null()
                      ? "unknown (the room it needs is held by work with no expected duration)"
                      : str(x["estimated_start"]))
              << "\n";
  }
  if (x.contains("binding")) print_binding(x["binding"]);
  if (x.contains("reclaim")) print_reclaim(x["reclaim"]);
  if (!x["deadline"].is_null()) {
    std::cout << "  Deadline:        " << str(x["deadline"])
              << (x.value("deadline_at_risk", false) ? " (at risk with the capacity at hand)" : "")
              << "\n";
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
