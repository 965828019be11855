#include "gpuaas/core/state_view.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "gpuaas/core/policy_set_object.hpp"
#include "gpuaas/core/quantity.hpp"
#include "views/state_items.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

// GPU counts as numbers (fractions stay fractions); other resources as Kubernetes quantities.
json gpus(int64_t milli) {
  if (milli % 1000 == 0) return milli / 1000;
  return static_cast<double>(milli) / 1000.0;
}

json resources(const ResourceList& r) {
  json j = json::object();
  for (const auto& [name, milli] : r) j[name] = format_milli(milli);
  return j;
}

int64_t get(const ResourceList& r, const char* name) {
  auto it = r.find(name);
  return it == r.end() ? 0 : it->second;
}

json labels_json(const Labels& labels) {
  json j = json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j;
}

json latest_samples(const std::vector<const SeriesSample*>& samples) {
  json j = json::object();
  for (const auto* s : samples) j[s->name] = s->value;
  return j;
}

}  // namespace

namespace state_items {

json node_json(const ClusterModel& model, const KubeObject& n,
               const std::vector<std::string>& gpu_keys) {
  const NodeStatus& st = *n.node;
  auto product = n.meta.labels.find(kGpuProductLabel);
  const ResourceList& req = model.node_requested(n.meta.name);
  json j = {
      {"name", n.meta.name},
      {"uid", n.meta.uid},
      {"ready", st.ready},
      {"unschedulable", st.unschedulable},
      {"gpu_product", product == n.meta.labels.end() ? "" : product->second},
      {"gpus",
       {{"capacity", gpus(get(st.capacity, kGpuResource))},
        {"allocatable", gpus(get(st.allocatable, kGpuResource))},
        {"requested", gpus(get(req, kGpuResource))}}},
      {"capacity", resources(st.capacity)},
      {"allocatable", resources(st.allocatable)},
      {"requested", resources(req)},
      {"labels", labels_json(n.meta.labels)},
  };
  if (!st.taints.empty()) {
    json taints = json::array();
    for (const auto& t : st.taints) {
      taints.push_back({{"key", t.key}, {"value", t.value}, {"effect", t.effect}});
    }
    j["taints"] = std::move(taints);
  }
  // Per-GPU samples from dcgm-exporter (Hostname/gpu labels).
  json per_gpu = json::object();
  // The keys are sorted: this node's are the run that starts with its name and a slash.
  std::string prefix = n.meta.name + "/";
  for (auto it = std::lower_bound(gpu_keys.begin(), gpu_keys.end(), prefix);
       it != gpu_keys.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
    std::string gpu = it->substr(prefix.size());
    per_gpu[gpu] = latest_samples(model.metrics().for_gpu(n.meta.name, gpu));
  }
  if (!per_gpu.empty()) j["gpu_metrics"] = std::move(per_gpu);
  return j;
}

}  // namespace state_items

namespace {

// A plugin's demand: pod sets with per-pod amounts, and the total over all pods.
json demand_json(const v1::WorkloadDemand& d) {
  json sets = json::array();
  std::map<std::string, int64_t> total;
  for (const auto& s : d.pod_sets()) {
    json per_pod = json::object();
    for (const auto& r : s.per_pod()) {
      per_pod[r.name()] =
          r.name() == kGpuResource ? gpus(r.milli()) : json(format_milli(r.milli()));
      // Saturating: a huge replica count must not wrap around.
      int64_t part = 0;
      int64_t& sum = total[r.name()];
      if (__builtin_mul_overflow(r.milli(), s.count(), &part) ||
          __builtin_add_overflow(sum, part, &sum)) {
        sum = INT64_MAX;
      }
    }
    json set = {{"name", s.name()}, {"count", s.count()}, {"per_pod", std::move(per_pod)}};
    if (s.min_count() > 0) set["min_count"] = s.min_count();
    sets.push_back(std::move(set));
  }
  json totals = json::object();
  for (const auto& [name, milli] : total) {
    totals[name] = name == kGpuResource ? gpus(milli) : json(format_milli(milli));
  }
  auto g = total.find(kGpuResource);
  return {{"pod_sets", std::move(sets)},
          {"total", std::move(totals)},
          {"gpus", gpus(g == total.end() ? 0 : g->second)}};
}

}  // namespace

namespace state_items {

json workload_json(const ClusterModel& model, const std::string& key, const KubeObject& w) {
  auto queue = w.meta.labels.find("kueue.x-k8s.io/queue-name");
  json pods = json::array();
  // Each metric over every series of the workload's pods (one per GPU for dcgm-exporter).
  struct Agg {
    double sum = 0, min = 0, max = 0;
    int n = 0;
  };
  std::map<std::string, Agg> agg;
  for (const auto* p : model.pods_of(w.meta)) {
    pods.push_back(p->meta.name);
    for (const auto* s : model.metrics().for_pod(p->meta.namespace_, p->meta.name)) {
      Agg& a = agg[s->name];
      a.min = a.n == 0 ? s->value : std::min(a.min, s->value);
      a.max = a.n == 0 ? s->value : std::max(a.max, s->value);
      a.sum += s->value;
      ++a.n;
    }
  }
  json metrics = json::object();
  for (const auto& [name, a] : agg) {
    metrics[name] = {{"mean", a.sum / a.n}, {"min", a.min}, {"max", a.max}, {"series", a.n}};
  }
  json j = {
      {"api_version", w.meta.api_version},
      {"kind", w.meta.kind},
      {"namespace", w.meta.namespace_},
      {"name", w.meta.name},
      {"uid", w.meta.uid},
      {"resource_version", w.meta.resource_version},
      {"queue", queue == w.meta.labels.end() ? "" : queue->second},
      // Lifecycle and demand come from the plugin of the workload's kind, when one is loaded.
      {"state", "Unknown"},
      {"labels", labels_json(w.meta.labels)},
      {"pods", std::move(pods)},
      {"metrics", std::move(metrics)},
  };
  if (const WorkloadView* v = model.view_of(key)) {
    j["plugin"] = v->plugin;
    if (v->lifecycle) {
      j["state"] = lifecycle_state_name(v->lifecycle->state());
      if (!v->lifecycle->reason().empty()) j["reason"] = v->lifecycle->reason();
    }
    if (v->demand) {
      if (!v->demand->queue_name().empty()) j["queue"] = v->demand->queue_name();
      j["priority_class"] = v->demand->priority_class();
      j["demand"] = demand_json(*v->demand);
    }
    if (!v->error.empty()) j["error"] = v->error;
  }
  return j;
}

bool is_policy_set(const KubeObject& o) {
  return o.meta.kind == kPolicySetKind && o.meta.api_version == kPolicySetApiVersion;
}

json clock_json(const ClusterModel& model) {
  return model.now().time_since_epoch().count() == 0 ? json(nullptr)
                                                     : json(wire::format_rfc3339(model.now()));
}

json gpu_pools_json(const ClusterModel& model) {
  json pools = json::object();
  for (const auto& [product, p] : model.gpu_pools()) {
    pools[product] = {{"nodes", p.nodes},
                      {"ready_nodes", p.ready_nodes},
                      {"capacity", gpus(p.capacity_milli)},
                      {"allocatable", gpus(p.allocatable_milli)},
                      {"requested", gpus(p.requested_milli)}};
  }
  return pools;
}

}  // namespace state_items

using namespace state_items;

std::string render_namespace_state_json(const ClusterModel& model, std::string_view ns,
                                        const std::string& cluster_queues_json) {
  json workloads = json::array();
  for (const auto& [key, w] : model.workloads()) {
    if (w.meta.namespace_ == ns) workloads.push_back(workload_json(model, key, w));
  }
  std::size_t total = 0, running = 0;
  for (const auto& [key, p] : model.pods()) {
    if (p.meta.namespace_ != ns) continue;
    ++total;
    running += p.pod->phase == "Running" ? 1 : 0;
  }
  json j = {
      {"namespace", ns},
      {"clock", clock_json(model)},
      {"gpus_by_flavor", gpu_pools_json(model)},
      {"workloads", std::move(workloads)},
      {"pods", {{"total", total}, {"running", running}}},
      {"metrics", {{"series", model.metrics().for_namespace(ns).size()}}},
      {"cluster_queues", json::parse(cluster_queues_json, nullptr, false)},
  };
  return j.dump();
}

std::string render_state_json(const ClusterModel& model, const IntakeStats& stats,
                              const DaemonConfig& config, const std::string& cluster_queues_json,
                              const std::string& node_pools_json) {
  json nodes = json::array();
  const auto gpu_keys = model.metrics().gpu_keys();  // sorted, once for every node
  for (const auto& [name, n] : model.nodes()) nodes.push_back(node_json(model, n, gpu_keys));
  json pools = gpu_pools_json(model);
  json workloads = json::array();
  for (const auto& [key, w] : model.workloads()) {
    if (!is_policy_set(w)) workloads.push_back(workload_json(model, key, w));
  }
  std::size_t running = 0;
  for (const auto& [key, p] : model.pods()) running += p.pod->phase == "Running" ? 1 : 0;
  json j = {
      {"clock", clock_json(model)},
      {"nodes", std::move(nodes)},
      {"gpus_by_flavor", std::move(pools)},
      {"workloads", std::move(workloads)},
      {"pods", {{"total", model.pods().size()}, {"running", running}}},
      {"metrics", {{"series", model.metrics().series_count()}}},
      {"policies", config.policy_files},
      {"cluster_queues", json::parse(cluster_queues_json, nullptr, false)},
      {"node_pools", json::parse(node_pools_json, nullptr, false)},
      {"intake",
       {{"events_applied", stats.events_applied},
        {"events_replayed", stats.events_replayed},
        {"redeliveries_skipped", stats.redeliveries_skipped},
        {"deadlettered", stats.deadlettered},
        {"gaps_deferred", stats.gaps_deferred},
        {"last_applied_sequence", stats.last_applied_sequence},
        {"snapshot_sequence", stats.snapshot_sequence},
        {"snapshots_written", stats.snapshots_written},
        {"snapshots_refused", stats.snapshots_refused},
        {"snapshot_bytes", stats.snapshot_bytes},
        {"action_results",
         {{"applied", stats.action_results_applied},
          {"conflict", stats.action_results_conflict},
          {"failed", stats.action_results_failed},
          {"dropped", stats.action_results_dropped}}},
        {"objects_applied", model.stats().objects_applied},
        {"duplicates", model.stats().duplicates},
        {"stale", model.stats().stale},
        {"samples_recorded", model.stats().samples_recorded}}},
  };
  return j.dump();
}

}  // namespace gpuaas::core
