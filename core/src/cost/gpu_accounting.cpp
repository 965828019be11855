#include "gpu_accounting.hpp"

#include "capacity/capacity_stage.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpu_accounting_metrics.hpp"
#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/metric_store.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pod_key.hpp"

namespace gpuaas::core::cost {

using json = nlohmann::json;

namespace {

constexpr const char* kUtil = "DCGM_FI_DEV_GPU_UTIL";  // percent, per GPU
// A GPU sample older than this says nothing about now (several missed scrapes).
constexpr auto kSampleFresh = std::chrono::minutes(5);

bool finished(const PodStatus& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

double gpus_of(const ResourceList& r) {
  auto it = r.find(kGpuResource);
  return it == r.end() ? 0.0 : static_cast<double>(it->second) / 1000;
}

bool has_labels(const KubeObject& node, const policy::LabelMap& want) {
  for (const auto& [k, v] : want) {
    auto it = node.meta.labels.find(k);
    if (it == node.meta.labels.end() || it->second != v) return false;
  }
  return true;
}

// "Kind.group" of an object ("Pod" for the core group).
std::string kind_group(const KubeObject& o) {
  const auto slash = o.meta.api_version.find('/');
  if (slash == std::string::npos) return o.meta.kind;
  return o.meta.kind + "." + o.meta.api_version.substr(0, slash);
}

}  // namespace

std::map<std::string, Price> resolve_prices(const policy::PolicySet& set) {
  return resolve_prices(set, {});
}

std::map<std::string, Price> resolve_prices(const policy::PolicySet& set,
                                            const std::map<std::string, Price>& opencost) {
  std::map<std::string, Price> out;
  for (const auto& f : set.flavors) out[f.name];
  std::map<std::string, const policy::NodePool*> pools;
  for (const auto& p : set.node_pools) {
    pools[p.flavor] = &p;
    if (p.price_per_node_hour > 0 && p.gpus_per_node > 0)
      out[p.flavor] = {p.price_per_node_hour / p.gpus_per_node, "NodePool"};
  }
  for (const auto& [flavor, p] : opencost) out[flavor] = p;
  for (const auto& f : set.cost_model.flavors) {
    if (f.price_per_gpu_hour) {
      out[f.flavor] = {*f.price_per_gpu_hour, "CostModel"};
    } else if (f.price_per_node_hour && pools.count(f.flavor) &&
               pools[f.flavor]->gpus_per_node > 0) {
      out[f.flavor] = {*f.price_per_node_hour / pools[f.flavor]->gpus_per_node, "CostModel"};
    }
  }
  return out;
}

GpuAccounting::GpuAccounting(telemetry::Registry* registry) {
  if (!registry) return;
  metrics_ = std::make_unique<Metrics>();
  auto counter = [&](const char* name, const char* help) {
    return &telemetry::BuildCounter().Name(name).Help(help).Register(*registry);
  };
  auto& m = *metrics_;
  m.allocated = counter("gpuaas_gpu_allocated_seconds_total",
                        "GPU-seconds allocated to pods (their nvidia.com/gpu requests), by "
                        "namespace, ClusterQueue, flavor, node and GPU (\"\" when no dcgm-exporter "
                        "sample names the pod's GPU).");
  m.busy = counter("gpuaas_gpu_busy_seconds_total",
                   "Busy GPU-seconds: DCGM_FI_DEV_GPU_UTIL/100 of the GPUs pods hold, integrated.");
  m.idle_reserved = counter("gpuaas_gpu_idle_reserved_seconds_total",
                            "GPU-seconds of quota kept for workloads idle reclaim scaled to zero.");
  m.capacity =
      counter("gpuaas_gpu_capacity_seconds_total",
              "GPU-seconds the nodes offered (nvidia.com/gpu capacity), by flavor and node.");
  m.cost = counter("gpuaas_cost_total",
                   "Cost charged per namespace and ClusterQueue, in the CostModel's currency: "
                   "charge=allocated (max of requested and used GPU-time) and idle_reserved.");
  m.idle_cost = counter("gpuaas_idle_cluster_cost_total",
                        "Cost of GPU capacity nobody was charged for, per flavor.");
  m.outcomes = counter("gpuaas_outcomes_total",
                       "Verified outcomes per namespace and ClusterQueue: kind=job (succeeded), "
                       "inference_request (within the latency objective), notebook (a session "
                       "with busy GPUs).");
  m.price = &telemetry::BuildGauge()
                 .Name("gpuaas_gpu_hour_price")
                 .Help(
                     "The GPU-hour price in force per flavor and its source (CostModel, "
                     "NodePool, none).")
                 .Register(*registry);
  m.service_cost = counter("gpuaas_service_cost_total",
                           "Cost charged for a service's pods (a serving workload a "
                           "ServiceObjective selects), per namespace and service.");
  m.service_cost_per_outcome =
      &telemetry::BuildGauge()
           .Name("gpuaas_service_cost_per_outcome")
           .Help(
               "A service's cost per request within its ServiceObjective (latency and quality), "
               "since the daemon began; absent until it has one.")
           .Register(*registry);
  m.opencost_refused = &telemetry::BuildGauge()
                            .Name("gpuaas_opencost_prices_refused")
                            .Help(
                                "Nodes whose OpenCost prices were not used (zero or missing), "
                                "by reason, at the last look.")
                            .Register(*registry);
}

GpuAccounting::~GpuAccounting() = default;
GpuAccounting::GpuAccounting(GpuAccounting&&) noexcept = default;
GpuAccounting& GpuAccounting::operator=(GpuAccounting&&) noexcept = default;

// Here, where Metrics is complete. The metrics are the process's (the counters and what they
// show already): they stay.
void GpuAccounting::adopt_state(GpuAccounting&& other) {
  auto metrics = std::move(metrics_);
  *this = std::move(other);
  metrics_ = std::move(metrics);
}

void GpuAccounting::set_policy(const policy::PolicySet& set) {
  policy_ = set;
  prices_ = resolve_prices(set, opencost_.by_flavor());
  restate_all_ = true;
}

// OpenCost's prices as its latest samples say; a price that moved restates every source, so
// each accrues at the new price from now on.
void GpuAccounting::refresh_prices(const ClusterModel& model) {
  opencost_.refresh(
      model.metrics(),
      [&](const std::string& node) {
        auto it = model.nodes().find(node);
        return it == model.nodes().end() || !it->second.node ? std::string()
                                                             : flavor_of_node(it->second);
      },
      [&](const std::string& node) {
        auto it = model.nodes().find(node);
        return it == model.nodes().end() || !it->second.node ? 0.0
                                                             : gpus_of(it->second.node->capacity);
      });
  auto prices = resolve_prices(policy_, opencost_.by_flavor());
  auto same = [](const std::map<std::string, Price>& a, const std::map<std::string, Price>& b) {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
      if (i->first != j->first || i->second.gpu_hour != j->second.gpu_hour ||
          i->second.source != j->second.source)
        return false;
    return true;
  };
  if (same(prices, prices_)) return;
  prices_ = std::move(prices);
  restate_all_ = true;
}

double GpuAccounting::price(const std::string& flavor) const {
  auto it = prices_.find(flavor);
  return it == prices_.end() ? 0.0 : it->second.gpu_hour;
}

// A node's flavor: its NodePool's, else the ResourceFlavor whose node labels it carries, else
// the set's only flavor, else its GPU product.
std::string GpuAccounting::flavor_of_node(const KubeObject& node) const {
  for (const auto& p : policy_.node_pools)
    if (!p.node_selector.empty() && has_labels(node, p.node_selector)) return p.flavor;
  for (const auto& f : policy_.flavors)
    if (!f.node_labels.empty() && has_labels(node, f.node_labels)) return f.name;
  if (policy_.flavors.size() == 1) return policy_.flavors.front().name;
  auto it = node.meta.labels.find(kGpuProductLabel);
  return it == node.meta.labels.end() ? std::string() : it->second;
}

RowKey GpuAccounting::row_of_pod(const ClusterModel& model, const admission::Scheduler& scheduler,
                                 const KubeObject& pod, std::string* workload) const {
  std::string w = model.workload_of(pod);
  RowKey row{pod.meta.namespace_, w.empty() ? std::string() : scheduler.cluster_queue_of(w)};
  if (workload) *workload = std::move(w);
  return row;
}

void GpuAccounting::update(ClusterModel& model, const admission::Scheduler& scheduler,
                           const std::map<std::string, int64_t>& coming_gpus,
                           bool watch_reservations, const std::vector<std::string>& touched) {
  if (const auto& hook = update_hook()) hook(*this, policy_);
  const wire::EventTime now = model.now();
  // Pods whose dcgm samples changed: their busy time (and sessions) change.
  for (const auto& p : touched) {
    const auto slash = p.find('/');
    if (slash != std::string::npos) pods_.insert(pod_key(p.substr(0, slash), p.substr(slash + 1)));
  }
  // Samples that stop coming must stop counting as busy: every few minutes the pods that hold
  // GPUs are stated again (a stale sample counts as nothing).
  if (now >= next_restate_) {
    next_restate_ = now + kSampleFresh;
    pods_.insert(gpu_pods_.begin(), gpu_pods_.end());
    refresh_prices(model);
  }
  if (restate_all_) {
    restate_all_ = false;
    for (const auto& [name, n] : model.nodes()) nodes_.insert(name);
    for (const auto& [key, p] : model.pods()) pods_.insert(key);
    pods_.insert(gpu_pods_.begin(), gpu_pods_.end());
    reservations_ = true;
    coming_.clear();
  }
  for (const auto& name : nodes_) state_node(model, name, now);
  nodes_.clear();
  for (const auto& key : pods_) state_pod(model, scheduler, key, now);
  pods_.clear();
  if (reservations_) {
    reservations_ = false;
    if (watch_reservations || !reserved_.empty()) state_reservations(model, scheduler, now);
  }
  // Nodes asked for: the scaler's count changes at its scans, with or without a decision.
  if (coming_gpus != coming_) {
    for (const auto& [flavor, gpus] : coming_)
      if (!coming_gpus.count(flavor)) ledger_.set("coming/" + flavor, {}, now);
    for (const auto& [flavor, gpus] : coming_gpus)
      ledger_.set("coming/" + flavor,
                  {{Measure::kCapacity,
                    {"", "", flavor, "", ""},
                    static_cast<double>(gpus),
                    price(flavor)}},
                  now);
    coming_ = coming_gpus;
  }
  if (!touched.empty() && !policy_.cost_model.latency_metric.empty())
    inference_pass(model, scheduler);
  ledger_.tick(now);
  service_ledger_.tick(now);
}

void GpuAccounting::state_node(const ClusterModel& model, const std::string& name,
                               wire::EventTime now) {
  auto it = model.nodes().find(name);
  if (it == model.nodes().end() || !it->second.node) {
    ledger_.set("node/" + name, {}, now);
    return;
  }
  const std::string flavor = flavor_of_node(it->second);
  ledger_.set("node/" + name,
              {{Measure::kCapacity,
                {"", "", flavor, name, ""},
                gpus_of(it->second.node->capacity),
                price(flavor)}},
              now);
}

// One pod: its GPUs allocated (per device dcgm names), busy, and charged as OpenCost does.
void GpuAccounting::state_pod(const ClusterModel& model, const admission::Scheduler& scheduler,
                              const std::string& key, wire::EventTime now) {
  const KubeObject* pod = model.pod(key);
  std::vector<Contribution> c;
  std::string workload;
  double used = 0;
  RowKey row;
  if (pod && pod->pod && !pod->pod->node_name.empty() && !finished(*pod->pod)) {
    const double requested = gpus_of(pod->pod->requests);
    std::map<std::string, double> util;  // the GPUs dcgm-exporter says the pod holds
    for (const SeriesSample* s : model.metrics().for_pod(pod->meta.namespace_, pod->meta.name)) {
      if (s->name != kUtil || s->time < now - kSampleFresh) continue;
      util[std::string(MetricStore::label(*s, "gpu"))] = std::clamp(s->value / 100, 0.0, 1.0);
    }
    if (requested > 0 || !util.empty()) {
      row = row_of_pod(model, scheduler, *pod, &workload);
      const std::string& node = pod->pod->node_name;
      auto n = model.nodes().find(node);
      const std::string flavor =
          n == model.nodes().end() ? std::string() : flavor_of_node(n->second);
      SeriesKey k{row.namespace_, row.cluster_queue, flavor, node, ""};
      double left = requested;
      for (const auto& [gpu, u] : util) {
        k.gpu = gpu;
        const double share = std::min(1.0, left);
        c.push_back({Measure::kAllocated, k, share, 0});
        left -= share;
        c.push_back({Measure::kBusy, k, u, 0});
        used += u;
      }
      k.gpu.clear();
      c.push_back({Measure::kAllocated, k, left, 0});
      // OpenCost's allocation: the larger of what was requested and what was used.
      c.push_back({Measure::kCharged,
                   {row.namespace_, row.cluster_queue, flavor, "", ""},
                   std::max(requested, used),
                   price(flavor)});
    }
  }
  if (c.empty() && !gpu_pods_.count(key)) return;
  ledger_.set("pod/" + key, c, now);
  {
    double charged = 0;
    std::string flavor;
    for (const auto& x : c)
      if (x.measure == Measure::kCharged) {
        charged = x.gpus;
        flavor = x.key.flavor;
      }
    state_service_pod(key, services_.count(workload) ? workload : std::string(), flavor, charged,
                      now);
  }
  if (c.empty()) {
    gpu_pods_.erase(key);
  } else {
    gpu_pods_.insert(key);
  }
  // Sessions: a run lasts while any of the workload's pods runs; it counts once, when busy.
  auto was = session_of_pod_.find(key);
  if (was != session_of_pod_.end() && (c.empty() || was->second != workload)) {
    auto& pods = sessions_[was->second];
    pods.erase(key);
    if (pods.empty()) {
      sessions_.erase(was->second);
      sessions_used_.erase(was->second);
    }
    session_of_pod_.erase(was);
  }
  if (c.empty() || workload.empty()) return;
  const auto& kinds = policy_.cost_model.session_kinds;
  const KubeObject* w = model.object(workload);
  const WorkloadView* v = model.view_of(workload);
  if (!w ||
      ((!v || !v->session) && std::find(kinds.begin(), kinds.end(), kind_group(*w)) == kinds.end()))
    return;
  session_of_pod_[key] = workload;
  sessions_[workload].insert(key);
  if (used > 0 && sessions_used_.insert(workload).second)
    ledger_.outcome(row, Outcome::kSession, 1);
}

// Quota held at zero: the reservation's GPUs, charged to its tenant on a line of their own.
void GpuAccounting::state_reservations(const ClusterModel& model,
                                       const admission::Scheduler& scheduler, wire::EventTime now) {
  std::set<std::string> parked;
  for (const auto& d : scheduler.node_demand()) {
    if (!d.parked) continue;
    double gpus = 0;
    for (const auto& p : d.pods) gpus += static_cast<double>(p.count * p.gpu_milli) / 1000;
    const KubeObject* o = model.object(d.workload);
    ledger_.set(
        "reserve/" + d.workload,
        {{Measure::kIdleReserved,
          {o ? o->meta.namespace_ : "", scheduler.cluster_queue_of(d.workload), d.flavor, "", ""},
          gpus,
          price(d.flavor)}},
        now);
    parked.insert(d.workload);
  }
  for (const auto& w : reserved_)
    if (!parked.count(w)) ledger_.set("reserve/" + w, {}, now);
  reserved_ = std::move(parked);
}

// Requests within the objective: the rise of the histogram bucket at (or just below) the
// objective, per serving pod.
void GpuAccounting::inference_pass(const ClusterModel& model,
                                   const admission::Scheduler& scheduler) {
  const auto& cm = policy_.cost_model;
  const std::string bucket = cm.latency_metric + "_bucket";
  const double objective = cm.latency_objective_seconds / cm.latency_metric_unit_seconds;
  // Per series without its le: the chosen bucket's sample.
  std::map<std::string, const SeriesSample*> chosen;
  std::map<std::string, double> chosen_le;
  for (const SeriesSample* s : model.metrics().named(bucket)) {
    const std::string le(MetricStore::label(*s, "le"));
    char* end = nullptr;
    const double v = std::strtod(le.c_str(), &end);
    if (le.empty() || end == le.c_str() || v > objective * (1 + 1e-9)) continue;
    std::string id;
    for (const auto& [n, val] : s->labels)
      if (n != "le") id += n + "=" + val + ",";
    auto [it, fresh] = chosen_le.try_emplace(id, v);
    if (fresh || v >= it->second) {
      it->second = v;
      chosen[id] = s;
    }
  }
  // Series that left the metric store (their pod is gone) are forgotten.
  for (auto it = last_bucket_.begin(); it != last_bucket_.end();)
    it = chosen.count(it->first) ? std::next(it) : last_bucket_.erase(it);
  for (const auto& [id, s] : chosen) {
    const std::string ns(MetricStore::label(*s, "namespace"));
    const std::string pod_name(MetricStore::label(*s, "pod"));
    auto [it, fresh] = last_bucket_.try_emplace(id, 0.0);
    const double rise = s->value >= it->second ? s->value - it->second : s->value;  // reset
    it->second = s->value;
    if (rise <= 0) continue;
    RowKey row{ns, ""};
    if (const KubeObject* pod = model.pod(pod_key(ns, pod_name))) {
      std::string workload;
      row = row_of_pod(model, scheduler, *pod, &workload);
      if (services_.count(workload)) continue;  // its ServiceObjective counts it (served)
    }
    ledger_.outcome(row, Outcome::kInferenceRequest, rise);
  }
}

void GpuAccounting::served(const ClusterModel& model, const admission::Scheduler& scheduler,
                           const Served& s) {
  const KubeObject* pod = model.pod(s.pod);
  const KubeObject* w = model.object(s.workload);
  if (!pod || !w) return;
  const RowKey row = row_of_pod(model, scheduler, *pod, nullptr);
  auto [it, fresh] = services_.try_emplace(s.workload);
  ServiceInfo& info = it->second;
  info.namespace_ = w->meta.namespace_;
  info.name = w->meta.name;
  info.cluster_queue = row.cluster_queue;
  info.requests += s.requests;
  if (!service_pods_.count(s.pod)) pods_.insert(s.pod);  // its charge counts for the service too
  if (s.outcomes <= 0) return;
  ledger_.outcome(row, Outcome::kInferenceRequest, s.outcomes);
  service_ledger_.outcome({info.namespace_, info.name}, Outcome::kInferenceRequest, s.outcomes);
}

// A service's pod: its charge in the service ledger, row (namespace, service name).
void GpuAccounting::state_service_pod(const std::string& key, const std::string& workload,
                                      const std::string& flavor, double gpus, wire::EventTime now) {
  if (workload.empty() || gpus <= 0) {
    if (service_pods_.erase(key)) service_ledger_.set("pod/" + key, {}, now);
    return;
  }
  const ServiceInfo& info = services_.at(workload);
  service_ledger_.set(
      "pod/" + key,
      {{Measure::kCharged, {info.namespace_, info.name, flavor, "", ""}, gpus, price(flavor)}},
      now);
  service_pods_.insert(key);
}

void GpuAccounting::succeeded(const std::string& key, const KubeObject& workload,
                              const std::string& cluster_queue) {
  auto [it, fresh] = succeeded_.try_emplace(key, workload.meta.uid);
  if (!fresh && it->second == workload.meta.uid) return;  // the same incarnation again
  it->second = workload.meta.uid;
  ledger_.outcome({workload.meta.namespace_, cluster_queue}, Outcome::kJob, 1);
}

}  // namespace gpuaas::core::cost
