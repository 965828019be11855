#include "capacity/capacity_stage.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/telemetry/counter.hpp"
#include "gpuaas/telemetry/family.hpp"
#include "gpuaas/telemetry/gauge.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pod_key.hpp"
#include "workload_selector.hpp"

namespace gpuaas::core {

namespace {

constexpr std::size_t kMaxWindows = 1000;  // per service: days of one-minute windows of a replica
constexpr auto kSweepEvery = std::chrono::minutes(5);

gpuaas::capacity::Objectives objectives_of(const policy::ServiceObjective& o) {
  gpuaas::capacity::Objectives x;
  x.ttft_p95 = o.ttft_p95;
  x.tpot_p95 = o.tpot_p95;
  x.e2e_p95 = o.e2e_p95;
  x.max_error_rate = o.error_budget;
  x.min_quality = o.quality_threshold;
  return x;
}

}  // namespace

struct CapacityStage::Metrics {
  telemetry::Family<telemetry::Gauge>* sustainable = nullptr;
  telemetry::Family<telemetry::Gauge>* confidence = nullptr;
  telemetry::Family<telemetry::Gauge>* windows = nullptr;
  telemetry::Family<telemetry::Counter>* requests = nullptr;
  telemetry::Family<telemetry::Counter>* within = nullptr;
  mutable std::mutex mu;
  mutable std::map<telemetry::Counter*, double> shown;
  mutable std::map<std::string, telemetry::Labels> services;  // workload key -> its series' labels
};

CapacityStage::CapacityStage(telemetry::Registry* registry) {
  if (!registry) return;
  metrics_ = std::make_unique<Metrics>();
  auto gauge = [&](const char* name, const char* help) {
    return &telemetry::BuildGauge().Name(name).Help(help).Register(*registry);
  };
  auto counter = [&](const char* name, const char* help) {
    return &telemetry::BuildCounter().Name(name).Help(help).Register(*registry);
  };
  metrics_->sustainable = gauge(
      "gpuaas_service_sustainable_rps",
      "Requests per second one replica of a service sustains at its ServiceObjective, estimated "
      "from its metrics (the knee of latency against rate); bound=bracketed|at_least|at_most.");
  metrics_->confidence = gauge("gpuaas_service_capacity_confidence",
                               "How far the windows back the sustainable rate, 0 to 1.");
  metrics_->windows = gauge("gpuaas_service_capacity_windows",
                            "Windows of a service's replicas the estimate is made of.");
  metrics_->requests = counter("gpuaas_service_requests_total",
                               "Requests a service's replicas finished, from their metrics.");
  metrics_->within = counter(
      "gpuaas_service_requests_within_objective_total",
      "Requests within the service's ServiceObjective: latency and quality (its outcomes).");
}

CapacityStage::~CapacityStage() = default;

void CapacityStage::set_policy(const policy::PolicySet& set) {
  objectives_ = set.service_objectives;
  estimates_.clear();
}

const policy::ServiceObjective* CapacityStage::objective_for(
    const KubeObject& workload, const std::string& cluster_queue) const {
  for (const auto& o : objectives_)
    if (selector_matches(o.selector, workload, cluster_queue)) return &o;
  return nullptr;
}

std::vector<Served> CapacityStage::after_event(const std::vector<std::string>& touched,
                                               const ClusterModel& model,
                                               const admission::Scheduler& engine) {
  std::vector<Served> out;
  if (objectives_.empty()) return out;
  for (const auto& p : touched) {
    const auto slash = p.find('/');
    if (slash == std::string::npos) continue;
    const std::string_view ns(p.data(), slash), name(p.data() + slash + 1, p.size() - slash - 1);
    const std::string key = pod_key(ns, name);
    const KubeObject* pod = model.pod(key);
    if (!pod) continue;
    const std::string workload = model.workload_of(*pod);
    const KubeObject* w = workload.empty() ? nullptr : model.object(workload);
    if (!w) continue;
    const std::string cq = engine.cluster_queue_of(workload);
    const policy::ServiceObjective* o = objective_for(*w, cq);
    if (!o) continue;
    serving::ReplicaReading now = serving::read_replica(model.metrics(), ns, name, *o);
    if (!now.has_requests) continue;
    Service& svc = services_[workload];
    svc.objective = o->name;
    svc.namespace_ = w->meta.namespace_;
    svc.name = w->meta.name;
    svc.kind = w->meta.kind;
    svc.cluster_queue = cq;
    svc.replicas[key] = now.at;
    auto [it, fresh] = replicas_.try_emplace(key);
    Replica& r = it->second;
    if (fresh || r.workload != workload) {
      r = Replica{workload, std::move(now), {}};
      continue;  // a first reading: the increase starts at the next
    }
    if (now.at <= r.last.at) continue;  // the same scrape again
    const serving::Interval step = serving::between(r.last, now);
    r.last = std::move(now);
    const double within = serving::within_objective(step, *o);
    svc.requests += step.requests;
    svc.within += within;
    svc.errors += step.errors;
    out.push_back({key, workload, step.requests, within});
    serving::add(r.open, step);
    if (r.open.seconds >= static_cast<double>(o->window.count())) {
      close_window(svc, r, *o);
      r.open = {};
    }
  }
  if (model.now() >= next_sweep_) {
    next_sweep_ = model.now() + kSweepEvery;
    sweep(model);
  }
  return out;
}

void CapacityStage::close_window(Service& svc, const Replica& r,
                                 const policy::ServiceObjective& o) {
  const serving::Interval& i = r.open;
  gpuaas::capacity::Window w;
  w.end = std::chrono::duration<double>(r.last.at.time_since_epoch()).count();
  w.start = w.end - i.seconds;
  w.requests = i.requests;
  w.rate = i.seconds > 0 ? i.requests / i.seconds : 0;
  w.ttft_p95 = gpuaas::capacity::histogram_quantile(i.ttft, 0.95);
  w.tpot_p95 = gpuaas::capacity::histogram_quantile(i.tpot, 0.95);
  w.e2e_p95 = gpuaas::capacity::histogram_quantile(i.e2e, 0.95);
  w.error_rate = i.requests > 0 ? i.errors / i.requests : 0;
  w.quality = serving::quality_share(i, o);
  w.waiting = i.waiting;
  svc.windows.push_back(w);
  if (svc.windows.size() > kMaxWindows) svc.windows.pop_front();
  estimates_.erase(r.workload);
}

void CapacityStage::sweep(const ClusterModel& model) {
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    if (model.pod(it->first)) {
      ++it;
      continue;
    }
    auto s = services_.find(it->second.workload);
    if (s != services_.end()) s->second.replicas.erase(it->first);
    it = replicas_.erase(it);
  }
  for (auto it = services_.begin(); it != services_.end();) {
    const bool gone = !model.object(it->first) && it->second.replicas.empty();
    estimates_.erase(it->first);
    it = gone ? services_.erase(it) : std::next(it);
  }
}

const CapacityStage::Service* CapacityStage::service(const std::string& workload) const {
  auto it = services_.find(workload);
  return it == services_.end() ? nullptr : &it->second;
}

gpuaas::capacity::KneeEstimate CapacityStage::estimate(const std::string& workload) const {
  std::lock_guard lock(estimates_mu_);
  auto cached = estimates_.find(workload);
  if (cached != estimates_.end()) return cached->second;
  const Service* svc = service(workload);
  if (!svc) return {};
  const policy::ServiceObjective* o = nullptr;
  for (const auto& x : objectives_)
    if (x.name == svc->objective) o = &x;
  if (!o) return {};
  const std::vector<gpuaas::capacity::Window> ws(svc->windows.begin(), svc->windows.end());
  auto k = gpuaas::capacity::estimate_knee(ws, objectives_of(*o), o->min_requests);
  estimates_[workload] = k;
  return k;
}

std::string CapacityStage::explain_json(const std::string& workload, wire::EventTime) const {
  const Service* svc = service(workload);
  if (!svc) return "null";
  const auto k = estimate(workload);
  const policy::ServiceObjective* o = nullptr;
  for (const auto& x : objectives_)
    if (x.name == svc->objective) o = &x;
  nlohmann::json obj = nlohmann::json::object();
  if (o) {
    obj["ttft_p95_seconds"] = o->ttft_p95 ? nlohmann::json(*o->ttft_p95) : nlohmann::json();
    obj["tpot_p95_seconds"] = o->tpot_p95 ? nlohmann::json(*o->tpot_p95) : nlohmann::json();
    obj["e2e_p95_seconds"] = o->e2e_p95 ? nlohmann::json(*o->e2e_p95) : nlohmann::json();
    obj["error_budget"] = o->error_budget;
    obj["quality_threshold"] = o->quality_threshold;
  }
  nlohmann::json last = nullptr;
  if (!svc->windows.empty()) {
    const auto& w = svc->windows.back();
    last = {{"rate", w.rate},
            {"ttft_p95_seconds", w.ttft_p95},
            {"tpot_p95_seconds", w.tpot_p95},
            {"error_rate", w.error_rate},
            {"quality", w.quality},
            {"waiting", w.waiting}};
  }
  return nlohmann::json{{"objective", svc->objective},
                        {"objectives", obj},
                        {"replicas", svc->replicas.size()},
                        {"requests", svc->requests},
                        {"within_objective", svc->within},
                        {"within_share", svc->requests > 0 ? svc->within / svc->requests : 0.0},
                        {"capacity",
                         {{"sustainable_rps_per_replica", k.sustainable_rps},
                          {"bound", k.bound},
                          {"confidence", k.confidence},
                          {"windows", k.windows},
                          {"windows_meeting", k.meeting},
                          {"windows_missing", k.missing},
                          {"agreement", k.agreement},
                          {"highest_rate_seen", k.highest_rate}}},
                        {"last_window", last}}
      .dump();
}

void CapacityStage::export_metrics(wire::EventTime) const {
  if (!metrics_) return;
  std::lock_guard lock(metrics_->mu);
  auto& m = *metrics_;
  std::map<std::string, telemetry::Labels> now;
  for (const auto& [key, svc] : services_) {
    const auto k = estimate(key);
    const telemetry::Labels id = {{"namespace", svc.namespace_}, {"service", svc.name}};
    now[key] = id;
    for (const char* b : {"bracketed", "at_least", "at_most", "none"}) {
      telemetry::Labels l = id;
      l["bound"] = b;
      if (k.bound == b) {
        m.sustainable->Add(l).Set(k.sustainable_rps);
      } else if (m.sustainable->Has(l)) {
        m.sustainable->Remove(&m.sustainable->Add(l));
      }
    }
    m.confidence->Add(id).Set(k.confidence);
    m.windows->Add(id).Set(k.windows);
    for (auto [family, total] : {std::pair{m.requests, svc.requests}, {m.within, svc.within}}) {
      telemetry::Counter& c = family->Add(id);
      double& shown = m.shown[&c];
      if (total > shown) c.Increment(total - shown);
      shown = std::max(shown, total);
    }
  }
  // A service that left: its series go.
  for (const auto& [key, id] : m.services) {
    if (now.count(key)) continue;
    for (const char* b : {"bracketed", "at_least", "at_most", "none"}) {
      telemetry::Labels l = id;
      l["bound"] = b;
      if (m.sustainable->Has(l)) m.sustainable->Remove(&m.sustainable->Add(l));
    }
    for (auto* g : {m.confidence, m.windows})
      if (g->Has(id)) g->Remove(&g->Add(id));
    for (auto* c : {m.requests, m.within}) {
      if (!c->Has(id)) continue;
      telemetry::Counter* series = &c->Add(id);
      m.shown.erase(series);
      c->Remove(series);
    }
  }
  m.services = std::move(now);
}

}  // namespace gpuaas::core
