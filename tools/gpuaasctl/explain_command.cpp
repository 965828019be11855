// explain: why a workload waits and when it may start, from the daemon's admission engine.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "answer.hpp"
#include "commands.hpp"
#include "pages.hpp"
#include "table.hpp"

namespace gpuaas::ctl {
namespace {

std::string str(const nlohmann::json& j) {
  if (j.is_null()) return "-";
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

// Idle reclaim's view of the workload: where it stands and what holds its quota.
void print_reclaim(const nlohmann::json& r) {
  std::cout << "  Idle reclaim:    " << str(at(r, {"state"})) << " (" << str(at(r, {"rule"}))
            << ")\n";
  if (r.contains("quota")) {
    std::cout << "  Quota:           " << str(at(r, {"quota"}));
    if (r.contains("reserved_until")) std::cout << " until " << str(at(r, {"reserved_until"}));
    std::cout << "\n  At zero since:   " << str(at(r, {"at_zero_since"})) << ": "
              << str(at(r, {"reason"})) << "\n";
  } else if (r.contains("idle_at")) {
    std::cout << "  Last activity:   " << str(at(r, {"last_activity"})) << " ("
              << str(at(r, {"evidence"})) << ")\n  Idle at:         " << str(at(r, {"idle_at"}))
              << " (timeout " << str(at(r, {"timeout_seconds"})) << " s"
              << (flag(at(r, {"learned"})) ? ", learned" : "") << ")\n";
  }
}

std::string number(const nlohmann::json& j, int digits) {
  if (!j.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, j.get<double>());
  return buf;
}

// A service's measurement against its ServiceObjective: outcomes and its sustainable rate.
void print_serving(const nlohmann::json& s) {
  if (s.contains("scale")) {
    const auto& x = at(s, {"scale"});
    const auto& b = at(x, {"bounds"});
    std::cout << "  Scale:           ";
    if (b.is_null()) {
      std::cout << str(at(x, {"state"})) << ": " << str(at(x, {"why"})) << "\n";
    } else {
      std::cout << "replicas " << str(at(b, {"min_replicas"})) << ".."
                << str(at(b, {"max_replicas"})) << ", target " << number(at(b, {"target"}), 1)
                << " req/s per replica, set " << str(at(b, {"at"})) << " (" << str(at(b, {"why"}))
                << ")\n";
    }
  }
  if (!s.contains("capacity")) return;
  const auto& c = at(s, {"capacity"});
  std::cout << "  Objective:       " << str(at(s, {"objective"})) << " ("
            << number(at(s, {"within_share"}), 3) << " of " << number(at(s, {"requests"}), 0)
            << " requests within it, " << str(at(s, {"replicas"})) << " replicas)\n";
  const std::string bound = str(at(c, {"bound"}));
  std::cout << "  Capacity:        ";
  if (bound == "none") {
    std::cout << "not known yet (" << str(at(c, {"windows"})) << " windows)\n";
  } else {
    std::cout << (bound == "at_least"  ? "at least "
                  : bound == "at_most" ? "at most "
                                       : "")
              << number(at(c, {"sustainable_rps_per_replica"}), 2)
              << " req/s per replica at its objective (" << bound << ", confidence "
              << number(at(c, {"confidence"}), 2) << ", " << str(at(c, {"windows_meeting"}))
              << " windows met it, " << str(at(c, {"windows_missing"})) << " did not)\n";
  }
}

// Pods of an admitted workload that binding holds back, one line each.
void print_binding(const nlohmann::json& b) {
  for (const auto& p : list(b, {"refused"})) {
    std::cout << "  Not bound:       pod " << str(at(p, {"pod"}));
    if (!at(p, {"node"}).is_null()) std::cout << " (planned on " << str(at(p, {"node"})) << ")";
    std::cout << ": " << str(at(p, {"reason"})) << "\n";
  }
  if (b.contains("waiting"))
    std::cout << "  Waiting:         for " << str(at(b, {"waiting", "pods"})) << " of "
              << str(at(b, {"waiting", "of"})) << " pods before the gang opens\n";
}

int explain_one(const CtlContext& ctx, const std::string& workload, bool as_json) {
  auto a = ctx.ask_answer("explain", workload);
  if (!a) return fail(a.status());
  if (a->error) return fail_answer(*a, as_json);
  if (as_json) {
    std::cout << a->raw << "\n";
    return kExitOk;
  }
  const auto& x = a->body;
  const auto& w = at(x, {"workload"});
  std::cout << str(at(w, {"namespace"})) << "/" << str(at(w, {"name"})) << " ("
            << str(at(w, {"kind"})) << "): " << str(at(x, {"state"})) << "\n";
  std::cout << "  Reason:          " << str(at(x, {"reason"})) << ": " << str(at(x, {"message"}))
            << "\n";
  const std::string held_by = str(at(x, {"held_by"}));
  if (!held_by.empty() && held_by != "-") std::cout << "  Held back by:    " << held_by << "\n";
  std::cout << "  ClusterQueue:    " << str(at(x, {"cluster_queue"}));
  if (!at(x, {"position", "cluster_queue"}).is_null())
    std::cout << " (position " << str(at(x, {"position", "cluster_queue"})) << ")";
  std::cout << "\n  LocalQueue:      " << str(at(x, {"local_queue"}));
  if (!at(x, {"position", "local_queue"}).is_null())
    std::cout << " (position " << str(at(x, {"position", "local_queue"})) << ")";
  std::cout << "\n  Priority:        " << str(at(x, {"priority"})) << "\n";
  const std::string state = str(at(x, {"state"}));
  const bool pending = state == "Pending";
  if (pending || state == "Admitted") {
    std::cout << (pending ? "  Estimated start: " : "  Admitted at:     ")
              << (at(x, {"estimated_start"}).is_null()
                      ? "unknown (the room it needs is held by work with no expected duration)"
                      : str(at(x, {"estimated_start"})))
              << "\n";
  }
  if (x.contains("binding")) print_binding(at(x, {"binding"}));
  if (x.contains("reclaim")) print_reclaim(at(x, {"reclaim"}));
  if (x.contains("serving")) print_serving(at(x, {"serving"}));
  if (!at(x, {"deadline"}).is_null()) {
    std::cout << "  Deadline:        " << str(at(x, {"deadline"}))
              << (flag(at(x, {"deadline_at_risk"})) ? " (at risk with the capacity at hand)" : "")
              << "\n";
  }
  return kExitOk;
}

// Every queued workload, one row each, following the cursor (or one page with --limit).
int explain_all(const CtlContext& ctx, const ExplainOptions& o) {
  std::vector<std::vector<std::string>> rows = {
      {"WORKLOAD", "KIND", "STATE", "REASON", "CLUSTERQUEUE", "POSITION", "ESTIMATED START"}};
  nlohmann::json req = nlohmann::json::object();
  if (!o.ns.empty()) req["namespace"] = o.ns;
  const int rc = walk_pages(
      ctx, {"explain", req, o.limit, o.after, o.json, "gpuaasctl explain"},
      [&](const nlohmann::json& page) {
        for (const auto& x : list(page, {"items"})) {
          const auto& w = at(x, {"workload"});
          rows.push_back({str(at(w, {"namespace"})) + "/" + str(at(w, {"name"})),
                          str(at(w, {"kind"})), str(at(x, {"state"})), str(at(x, {"reason"})),
                          str(at(x, {"cluster_queue"})), str(at(x, {"position", "cluster_queue"})),
                          str(at(x, {"estimated_start"}))});
        }
      });
  if (rc == kExitOk && !o.json) table(rows);
  return rc;
}

}  // namespace

int explain(const CtlContext& ctx, const ExplainOptions& o) {
  if (o.workload.empty()) return explain_all(ctx, o);
  return explain_one(ctx, o.workload, o.json);
}

}  // namespace gpuaas::ctl
