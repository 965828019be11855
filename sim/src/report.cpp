#include "gpuaas/sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace gpuaas::sim {

using nlohmann::json;

namespace {

// Divided, not multiplied, by the inverse of the unit: 0.8702, not 0.8702000000000001.
double round_to(double v, double unit) { return std::round(v / unit) / std::round(1 / unit); }

json waits(const WaitStats& w) {
  return {{"mean", round_to(w.mean(), 0.001)},         {"p50", round_to(w.percentile(50), 0.001)},
          {"p95", round_to(w.percentile(95), 0.001)},  {"p99", round_to(w.percentile(99), 0.001)},
          {"max", round_to(w.percentile(100), 0.001)}, {"count", w.samples.size()}};
}

// Requests and what each one within the objective cost: the services' allocated GPU-seconds
// and their cost (each its share of the run's price) over the requests within objective, and
// over the outcomes (within objective and of passing quality).
json requests_json(const RunResult& r) {
  double gpu_seconds = 0, cost = 0, outcomes = 0;
  for (const auto& [key, v] : r.services) {
    gpu_seconds += v.allocated_gpu_seconds;
    cost += v.cost;
    outcomes += v.outcomes();
  }
  const auto within = static_cast<double>(r.requests_within_objective);
  json j = {
      {"total", r.requests},
      {"within_objective", r.requests_within_objective},
      {"gpu_seconds_per_request_within_objective",
       within > 0 ? json(round_to(gpu_seconds / within, 0.0001)) : json()},
      {"cost_per_request_within_objective",
       within > 0 ? json(round_to(cost / within, 0.000001)) : json()},
      {"cost_per_outcome", outcomes > 0 ? json(round_to(cost / outcomes, 0.000001)) : json()}};
  if (!r.ttft.samples.empty()) j["ttft_seconds"] = waits(r.ttft);
  return j;
}

json optional_seconds(const std::optional<double>& v) {
  return v ? json(round_to(*v, 0.001)) : json();
}

json per_workload(const RunResult& r) {
  json all = json::array();
  for (const auto& w : r.per_workload)
    all.push_back({{"workload", w.key},
                   {"kind", w.kind},
                   {"priority_class", w.priority_class},
                   {"submitted", round_to(w.submitted, 0.001)},
                   {"started", optional_seconds(w.started)},
                   {"done", optional_seconds(w.done)},
                   {"deadline", optional_seconds(w.deadline)},
                   {"deadline_missed", w.deadline_missed},
                   {"preemptions", w.preemptions}});
  return all;
}

json report_object(const RunResult& r) {
  json pools = json::object();
  for (const auto& [name, p] : r.pools)
    pools[name] = {{"nodes_launched", p.nodes_launched},
                   {"provisioning_failures", p.provisioning_failures},
                   {"node_seconds", round_to(p.node_seconds, 0.001)},
                   {"max_nodes", p.max_nodes}};
  json tenants = json::object();
  for (const auto& [ns, t] : r.tenants) {
    tenants[ns] = {
        {"workloads", t.workloads},
        {"outcomes", t.outcomes},
        {"allocated_gpu_hours", round_to(t.allocated_gpu_seconds / 3600, 0.001)},
        {"busy_gpu_hours", round_to(t.busy_gpu_seconds / 3600, 0.001)},
        {"idle_gpu_hours", round_to((t.allocated_gpu_seconds - t.busy_gpu_seconds) / 3600, 0.001)},
        {"idle_reserved_gpu_seconds", round_to(t.idle_reserved_gpu_seconds, 0.001)},
        {"queue_wait_seconds", waits(t.queue_wait)},
        {"never_started", t.never_started},
        {"deadline_misses", t.deadline_misses},
        {"preemptions", t.preemptions},
        {"cost", round_to(t.cost, 0.01)},
        {"cost_per_outcome",
         t.outcomes > 0 ? json(round_to(t.cost / static_cast<double>(t.outcomes), 0.01)) : json()}};
  }
  json services = json::object();
  for (const auto& [key, v] : r.services) {
    services[key] = {{"tenant", v.tenant},
                     {"requests", v.requests},
                     {"within_objective", v.within_objective},
                     {"quality", v.quality},
                     {"outcomes", round_to(v.outcomes(), 0.01)},
                     {"allocated_gpu_hours", round_to(v.allocated_gpu_seconds / 3600, 0.001)},
                     {"cost", round_to(v.cost, 0.0001)},
                     {"cost_per_outcome", v.outcomes() > 0 ? json(v.cost / v.outcomes()) : json()},
                     {"max_replicas", v.max_replicas}};
    if (!v.ttft.samples.empty()) services[key]["ttft_seconds"] = waits(v.ttft);
  }
  const auto cpo = r.cost_per_outcome();
  return {{"policy", r.policy},
          {"scenario", r.scenario},
          {"seed", r.seed},
          {"simulated_seconds", r.simulated_seconds},
          {"gpu_allocation_rate", round_to(r.gpu_allocation_rate(), 1e-4)},
          {"gpu_utilization", round_to(r.gpu_utilization(), 1e-4)},
          {"gpu_hours",
           {{"capacity", round_to(r.capacity_gpu_seconds / 3600, 0.001)},
            {"allocated", round_to(r.allocated_gpu_seconds / 3600, 0.001)},
            {"busy", round_to(r.busy_gpu_seconds / 3600, 0.001)},
            {"idle", round_to((r.allocated_gpu_seconds - r.busy_gpu_seconds) / 3600, 0.001)}}},
          {"idle_reserved_gpu_seconds", round_to(r.idle_reserved_gpu_seconds, 0.001)},
          {"gpu_seconds_allocated", round_to(r.allocated_gpu_seconds, 0.001)},
          {"gpu_seconds_at_zero", round_to(r.gpu_seconds_at_zero, 0.001)},
          {"wakes", r.wakes},
          {"wake_latency_seconds", waits(r.wake_latency)},
          {"queue_wait_seconds", waits(r.queue_wait)},
          {"never_started", r.never_started},
          {"deadlines", r.deadlines},
          {"deadline_misses", r.deadline_misses},
          {"preemptions", r.preemptions},
          {"cold_starts", r.cold_starts},
          {"node_seconds", round_to(r.node_seconds, 0.001)},
          {"max_nodes", r.max_nodes},
          {"nodes_added", r.nodes_added},
          {"nodes_removed", r.nodes_removed},
          {"pools", pools},
          {"cost", round_to(r.cost, 0.01)},
          {"outcomes", r.outcomes},
          {"cost_per_outcome", cpo ? json(round_to(*cpo, 0.01)) : json()},
          {"workloads", r.workloads},
          {"finished", r.finished},
          {"requests", requests_json(r)},
          {"tenants", tenants},
          {"services", services},
          {"per_workload", per_workload(r)},
          {"decisions",
           {{"actions", r.actions},
            {"actions_by_rule", r.actions_by_rule},
            {"events", r.events},
            {"deadlettered", r.deadlettered}}},
          {"daemon_report",
           r.daemon_report.empty() ? json() : json::parse(r.daemon_report, nullptr, false)},
          {"wall_seconds", round_to(r.wall_seconds, 0.001)}};
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string duration_text(double s) {
  if (s < 90) return fixed(s, 0) + "s";
  if (s < 5400) return fixed(s / 60, 1) + "m";
  return fixed(s / 3600, 1) + "h";
}

void table(std::ostringstream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string& v = cells[c];
      if (c == 0) {
        out << v << std::string(width[c] - v.size(), ' ');
      } else {
        out << "  " << std::string(width[c] - v.size(), ' ') << v;
      }
    }
    out << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

std::string clock_text(double seconds_since_start) {
  const auto m = static_cast<int64_t>(std::llround(seconds_since_start / 60));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(m / 60),
                static_cast<long long>(m % 60));
  return buf;
}

// Each workload with a deadline: when each policy got it done, against when it was due.
void deadline_table(std::ostringstream& out, const std::vector<RunResult>& runs) {
  std::vector<std::vector<std::string>> rows;
  if (runs.empty()) return;
  for (std::size_t i = 0; i < runs.front().per_workload.size(); ++i) {
    const WorkloadRecord& first = runs.front().per_workload[i];
    if (!first.deadline) continue;
    std::vector<std::string> row = {first.key, clock_text(first.submitted),
                                    clock_text(*first.deadline)};
    for (const auto& r : runs) {
      if (i >= r.per_workload.size()) continue;
      const WorkloadRecord& w = r.per_workload[i];
      std::string cell = w.done ? clock_text(*w.done) : std::string("not done");
      if (w.deadline_missed) cell += " MISSED";
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return;
  out << "\nDeadlines (hours:minutes since the start; done by the deadline is met)\n";
  std::vector<std::string> header = {"workload", "submitted", "due"};
  for (const auto& r : runs) header.push_back(r.policy);
  table(out, header, rows);
}

}  // namespace

std::string report_json(const RunResult& r) { return report_object(r).dump(2); }

std::string compare_json(const std::vector<RunResult>& runs) {
  json all = json::array();
  for (const auto& r : runs) all.push_back(report_object(r));
  return json{{"scenario", runs.empty() ? "" : runs.front().scenario},
              {"seed", runs.empty() ? 0 : runs.front().seed},
              {"runs", all}}
      .dump(2);
}

std::string decisions_jsonl(const std::vector<RunResult>& runs) {
  std::string out;
  for (const auto& r : runs) {
    for (const auto& d : r.decisions) {
      json body = json::parse(d.body, nullptr, false);
      out += json{{"policy", r.policy},
                  {"t", round_to(d.t, 0.001)},
                  {"target", d.target},
                  {"operation", d.operation},
                  {"rule", d.rule},
                  {"reason", d.reason},
                  {"body", body.is_discarded() ? json(d.body) : body}}
                 .dump();
      out += "\n";
    }
  }
  return out;
}

std::string report_table(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  // Each row says which way is better; "-" where neither is (sizes, counts of what happened).
  std::vector<std::string> header = {"", "better"};
  for (const auto& r : runs) header.push_back(r.policy);
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& name, const char* better, auto&& cell) {
    std::vector<std::string> v = {name, better};
    for (const auto& r : runs) v.push_back(cell(r));
    rows.push_back(std::move(v));
  };
  row("GPU allocation rate", "higher",
      [](const RunResult& r) { return fixed(100 * r.gpu_allocation_rate(), 1) + "%"; });
  row("GPU utilization (busy/allocated)", "higher",
      [](const RunResult& r) { return fixed(100 * r.gpu_utilization(), 1) + "%"; });
  row("GPU-hours allocated / busy", "-", [](const RunResult& r) {
    return fixed(r.allocated_gpu_seconds / 3600, 0) + " / " + fixed(r.busy_gpu_seconds / 3600, 0);
  });
  row("queue wait mean / p95", "lower", [](const RunResult& r) {
    return duration_text(r.queue_wait.mean()) + " / " + duration_text(r.queue_wait.percentile(95));
  });
  row("never started", "lower", [](const RunResult& r) { return std::to_string(r.never_started); });
  row("deadline misses", "lower", [](const RunResult& r) {
    return std::to_string(r.deadline_misses) + " of " + std::to_string(r.deadlines);
  });
  row("preemptions", "lower", [](const RunResult& r) { return std::to_string(r.preemptions); });
  row("cold starts", "lower", [](const RunResult& r) { return std::to_string(r.cold_starts); });
  row("idle reserved GPU-hours", "-",
      [](const RunResult& r) { return fixed(r.idle_reserved_gpu_seconds / 3600, 1); });
  row("GPU-hours at zero / wakes", "-", [](const RunResult& r) {
    return fixed(r.gpu_seconds_at_zero / 3600, 1) + " / " + std::to_string(r.wakes);
  });
  row("nodes max / node-hours", "lower", [](const RunResult& r) {
    return std::to_string(r.max_nodes) + " / " + fixed(r.node_seconds / 3600, 1);
  });
  row("cost", "lower", [](const RunResult& r) { return fixed(r.cost, 0); });
  row("outcomes", "higher", [](const RunResult& r) {
    return std::to_string(r.outcomes) + " of " + std::to_string(r.workloads);
  });
  row("cost per outcome", "lower", [](const RunResult& r) {
    const auto c = r.cost_per_outcome();
    return c ? fixed(*c, 2) : std::string("-");
  });
  row("requests in objective", "higher", [](const RunResult& r) {
    return r.requests == 0 ? std::string("-")
                           : fixed(100.0 * static_cast<double>(r.requests_within_objective) /
                                       static_cast<double>(r.requests),
                                   1) +
                                 "%";
  });
  row("GPU-s per request in objective", "lower", [](const RunResult& r) {
    double gpu_seconds = 0;
    for (const auto& [key, v] : r.services) gpu_seconds += v.allocated_gpu_seconds;
    return r.requests_within_objective == 0
               ? std::string("-")
               : fixed(gpu_seconds / static_cast<double>(r.requests_within_objective), 2);
  });
  row("TTFT p50 / p95", "lower", [](const RunResult& r) {
    return r.ttft.samples.empty()
               ? std::string("-")
               : fixed(r.ttft.percentile(50), 2) + "s / " + fixed(r.ttft.percentile(95), 2) + "s";
  });
  row("most replicas of a service", "-", [](const RunResult& r) {
    int64_t most = 0;
    for (const auto& [key, v] : r.services) most = std::max(most, v.max_replicas);
    return most == 0 ? std::string("-") : std::to_string(most);
  });
  row("gpuaasd actions / events", "-", [](const RunResult& r) {
    return std::to_string(r.actions) + " / " + std::to_string(r.events);
  });
  table(out, header, rows);

  out << "\nWhere the GPUs went (GPU-hours allocated = busy + idle; cost is the tenant's share;\n"
         "mean wait, misses and cost: lower is better)\n";
  std::set<std::string> tenants;
  for (const auto& r : runs)
    for (const auto& [ns, t] : r.tenants) tenants.insert(ns);
  std::vector<std::vector<std::string>> trows;
  for (const auto& ns : tenants) {
    for (const auto& r : runs) {
      auto it = r.tenants.find(ns);
      if (it == r.tenants.end()) continue;
      const TenantFigures& t = it->second;
      trows.push_back({ns, r.policy, fixed(t.allocated_gpu_seconds / 3600, 1),
                       fixed(t.busy_gpu_seconds / 3600, 1),
                       fixed((t.allocated_gpu_seconds - t.busy_gpu_seconds) / 3600, 1),
                       std::to_string(t.outcomes) + "/" + std::to_string(t.workloads),
                       duration_text(t.queue_wait.mean()), std::to_string(t.deadline_misses),
                       fixed(t.cost, 0)});
    }
  }
  table(
      out,
      {"tenant", "policy", "allocated", "busy", "idle", "outcomes", "mean wait", "misses", "cost"},
      trows);
  deadline_table(out, runs);
  return out.str();
}

}  // namespace gpuaas::sim
