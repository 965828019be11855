// What the ledger shows: its Prometheus families at a scrape, and the cost report (`gpuaasctl
// report --json`) per tenant and project.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpu_accounting.hpp"
#include "gpu_accounting_metrics.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::core::cost {

using json = nlohmann::json;

namespace {

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

}  // namespace

void GpuAccounting::export_metrics(wire::EventTime now) const {
  if (!metrics_) return;
  auto& m = *metrics_;
  std::lock_guard lock(m.mu);
  auto show = [&](telemetry::Counter& c, double value) {
    double& was = m.shown[&c];
    if (value > was) {
      c.Increment(value - was);
      was = value;
    }
  };
  std::set<telemetry::Counter*> live;
  for (const auto& [k, s] : ledger_.series()) {
    telemetry::Counter* c = nullptr;
    const SeriesKey& x = s.key;
    switch (s.measure) {
      case Measure::kAllocated:
      case Measure::kBusy:
        c = &(s.measure == Measure::kAllocated ? m.allocated : m.busy)
                 ->Add({{"namespace", x.namespace_},
                        {"cluster_queue", x.cluster_queue},
                        {"flavor", x.flavor},
                        {"node", x.node},
                        {"gpu", x.gpu}});
        break;
      case Measure::kIdleReserved:
        c = &m.idle_reserved->Add({{"namespace", x.namespace_},
                                   {"cluster_queue", x.cluster_queue},
                                   {"flavor", x.flavor}});
        break;
      case Measure::kCapacity:
        c = &m.capacity->Add({{"flavor", x.flavor}, {"node", x.node}});
        break;
      default:
        continue;
    }
    show(*c, ledger_.value(s, now));
    live.insert(c);
    // An allocated GPU shows its busy time too, 0 when dcgm never saw it busy (the idle signal),
    // and a tenant that ran GPU work its idle-reserved line.
    if (s.measure == Measure::kAllocated) {
      auto& busy = m.busy->Add({{"namespace", x.namespace_},
                                {"cluster_queue", x.cluster_queue},
                                {"flavor", x.flavor},
                                {"node", x.node},
                                {"gpu", x.gpu}});
      m.shown.try_emplace(&busy, 0.0);
      live.insert(&busy);
    }
  }
  for (const auto& [k, s] : ledger_.series()) {
    if (s.measure != Measure::kCharged) continue;
    auto& reserved = m.idle_reserved->Add({{"namespace", s.key.namespace_},
                                           {"cluster_queue", s.key.cluster_queue},
                                           {"flavor", s.key.flavor}});
    m.shown.try_emplace(&reserved, 0.0);
    live.insert(&reserved);
  }
  // Series the ledger dropped (their node is gone, or the pod ended an hour ago) leave /metrics.
  for (auto* c : m.series_shown) {
    if (live.count(c)) continue;
    m.shown.erase(c);
    for (auto* f : {m.allocated, m.busy, m.idle_reserved, m.capacity}) f->Remove(c);
  }
  m.series_shown = std::move(live);
  const Snapshot t = ledger_.now_totals(now);
  for (const auto& [row, r] : t.rows) {
    const telemetry::Labels base{{"namespace", row.namespace_},
                                 {"cluster_queue", row.cluster_queue}};
    auto with = [&](const char* k, const char* v) {
      telemetry::Labels l = base;
      l[k] = v;
      return l;
    };
    show(m.cost->Add(with("charge", "allocated")), r.cost_charged);
    show(m.cost->Add(with("charge", "idle_reserved")), r.cost_idle_reserved);
    for (int o = 0; o < static_cast<int>(Outcome::kCount); ++o)
      show(m.outcomes->Add(with("kind", to_string(static_cast<Outcome>(o)))), r.outcomes[o]);
  }
  for (const auto& [flavor, f] : t.flavors)
    show(m.idle_cost->Add({{"flavor", flavor}}), std::max(0.0, f.capacity_cost - f.charged_cost));
  std::set<telemetry::Gauge*> prices;
  for (const auto& [flavor, p] : prices_) {
    auto& g = m.price->Add({{"flavor", flavor}, {"source", p.source}});
    g.Set(p.gpu_hour);
    prices.insert(&g);
  }
  for (auto* g : m.prices_shown)
    if (!prices.count(g)) m.price->Remove(g);
  m.prices_shown = std::move(prices);
  export_service_metrics(now);
}

// Per service: its cost, and its cost per outcome; OpenCost's refusals.
void GpuAccounting::export_service_metrics(wire::EventTime now) const {
  auto& m = *metrics_;
  const Snapshot t = service_ledger_.now_totals(now);
  for (const auto& [row, r] : t.rows) {
    const telemetry::Labels l{{"namespace", row.namespace_}, {"service", row.cluster_queue}};
    auto& c = m.service_cost->Add(l);
    double& was = m.shown[&c];
    const double cost = r.cost_charged;
    if (cost > was) {
      c.Increment(cost - was);
      was = cost;
    }
    const double outcomes = r.outcomes[static_cast<int>(Outcome::kInferenceRequest)];
    if (outcomes > 0) m.service_cost_per_outcome->Add(l).Set(cost / outcomes);
  }
  std::map<std::string, double> refused;
  for (const auto& x : opencost_.refused())
    refused[x.reason.find(" is 0") != std::string::npos ? "zero" : "missing"] += 1;
  for (const char* reason : {"zero", "missing"})
    m.opencost_refused->Add({{"reason", reason}}).Set(refused[reason]);
}

std::string GpuAccounting::report_json(wire::EventTime now,
                                       std::optional<std::chrono::seconds> since) const {
  Snapshot t = ledger_.now_totals(now);
  wire::EventTime from = ledger_.started();
  if (since) {
    const Snapshot base = ledger_.at_or_before(t.at - *since);
    from = base.at;
    for (const auto& [row, r] : base.rows) t.rows[row] -= r;
    for (const auto& [flavor, f] : base.flavors) t.flavors[flavor] -= f;
  }
  auto hours = [](double s) { return round_to(s / 3600, 1e-4); };
  auto money = [](double v) { return round_to(v, 1e-4); };
  auto figures = [&](const RowTotals& r) {
    const double outcomes = r.outcomes[0] + r.outcomes[1] + r.outcomes[2];
    const double cost = r.cost_charged + r.cost_idle_reserved;
    return json{{"gpu_hours",
                 {{"allocated", hours(r.gpu_seconds[static_cast<int>(Measure::kAllocated)])},
                  {"busy", hours(r.gpu_seconds[static_cast<int>(Measure::kBusy)])},
                  {"idle_reserved", hours(r.gpu_seconds[static_cast<int>(Measure::kIdleReserved)])},
                  {"charged", hours(r.gpu_seconds[static_cast<int>(Measure::kCharged)])}}},
                {"outcomes",
                 {{"jobs", r.outcomes[static_cast<int>(Outcome::kJob)]},
                  {"inference_requests", r.outcomes[static_cast<int>(Outcome::kInferenceRequest)]},
                  {"notebooks", r.outcomes[static_cast<int>(Outcome::kSession)]},
                  {"total", outcomes}}},
                {"cost",
                 {{"allocated", money(r.cost_charged)},
                  {"idle_reserved", money(r.cost_idle_reserved)},
                  {"total", money(cost)}}},
                {"cost_per_outcome", outcomes > 0 ? json(money(cost / outcomes)) : json(nullptr)}};
  };
  std::map<std::string, std::pair<RowTotals, json>> tenants;
  for (const auto& [row, r] : t.rows) {
    auto& [sum, projects] = tenants[row.cluster_queue];
    sum += r;
    json p = figures(r);
    p["namespace"] = row.namespace_;
    if (projects.is_null()) projects = json::array();
    projects.push_back(std::move(p));
  }
  json out_tenants = json::array();
  for (auto& [cq, tp] : tenants) {
    json x = figures(tp.first);
    x["tenant"] = cq;
    x["projects"] = std::move(tp.second);
    out_tenants.push_back(std::move(x));
  }
  json services = json::array();
  {
    Snapshot st = service_ledger_.now_totals(now);
    if (since) {
      const Snapshot base = service_ledger_.at_or_before(st.at - *since);
      for (const auto& [row, r] : base.rows) st.rows[row] -= r;
    }
    for (const auto& [key, info] : services_) {
      const auto it = st.rows.find(RowKey{info.namespace_, info.name});
      const RowTotals r = it == st.rows.end() ? RowTotals{} : it->second;
      const double outcomes = r.outcomes[static_cast<int>(Outcome::kInferenceRequest)];
      services.push_back(
          {{"namespace", info.namespace_},
           {"service", info.name},
           {"tenant", info.cluster_queue},
           {"requests_all_time", info.requests},
           {"outcomes", outcomes},
           {"gpu_hours_charged", hours(r.gpu_seconds[static_cast<int>(Measure::kCharged)])},
           {"cost", money(r.cost_charged)},
           {"cost_per_outcome",
            outcomes > 0 ? json(money(r.cost_charged / outcomes)) : json(nullptr)}});
    }
  }
  json price_notes = json::array();
  for (const auto& x : opencost_.refused())
    price_notes.push_back({{"node", x.node}, {"source", "OpenCost"}, {"refused", x.reason}});
  json flavors = json::array();
  double capacity = 0, cluster_cost = 0, idle_cost = 0;
  for (const auto& [flavor, f] : t.flavors) {
    const double idle = std::max(0.0, f.capacity_cost - f.charged_cost);
    auto p = prices_.find(flavor);
    flavors.push_back({{"flavor", flavor},
                       {"gpu_hour_price", p == prices_.end() ? 0.0 : p->second.gpu_hour},
                       {"price_source", p == prices_.end() ? "none" : p->second.source},
                       {"capacity_gpu_hours", hours(f.capacity_gpu_seconds)},
                       {"cost", money(f.capacity_cost)},
                       {"idle_cost", money(idle)}});
    capacity += f.capacity_gpu_seconds;
    cluster_cost += f.capacity_cost;
    idle_cost += idle;
  }
  return json{{"from", wire::format_rfc3339(from)},
              {"to", wire::format_rfc3339(t.at)},
              {"window_seconds", std::chrono::duration<double>(t.at - from).count()},
              {"currency", policy_.cost_model.currency},
              {"tenants", std::move(out_tenants)},
              {"services", std::move(services)},
              {"cluster",
               {{"capacity_gpu_hours", hours(capacity)},
                {"cost", money(cluster_cost)},
                {"idle_cost", money(idle_cost)},
                {"flavors", std::move(flavors)},
                {"price_notes", std::move(price_notes)}}}}
      .dump();
}

}  // namespace gpuaas::core::cost
