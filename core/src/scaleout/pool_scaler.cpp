#include "pool_scaler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pool_scaler_support.hpp"

namespace gpuaas::core::scaleout {
namespace {

using namespace detail;  // NOLINT: the shared helpers

using core::KubeObject;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;
using wire::EventTime;

// GPU quota of the flavor: nominal quota in every ClusterQueue and Cohort.
int64_t flavor_quota(const policy::PolicySet& set, const std::string& flavor) {
  int64_t total = 0;
  bool any = false;
  auto add = [&](const std::vector<policy::ResourceGroup>& groups) {
    for (const auto& g : groups)
      for (const auto& f : g.flavors)
        if (f.flavor == flavor)
          for (const auto& r : f.resources)
            if (r.name == core::kGpuResource) {
              total += r.nominal_milli;
              any = true;
            }
  };
  for (const auto& cq : set.cluster_queues) add(cq.resource_groups);
  for (const auto& c : set.cohorts) add(c.resource_groups);
  return any ? total : -1;
}

}  // namespace

PoolScaler::PoolScaler(telemetry::Registry* registry) {
  if (!registry) return;
  nodes_gauge_ = &telemetry::BuildGauge()
                      .Name("gpuaas_nodepool_nodes")
                      .Help(
                          "Nodes of each NodePool by state: ready (Ready with GPUs), coming "
                          "(asked for or not Ready yet), draining, removing.")
                      .Register(*registry);
  scale_actions_ = &telemetry::BuildCounter()
                        .Name("gpuaas_nodepool_scale_actions_total")
                        .Help("Scale decisions per NodePool, by direction (up, down) and rule.")
                        .Register(*registry);
  failures_ = &telemetry::BuildCounter()
                   .Name("gpuaas_nodepool_provisioning_failures_total")
                   .Help("Nodes given up on: not Ready with GPUs within maxNodeProvisionTime.")
                   .Register(*registry);
  lead_gauge_ = &telemetry::BuildGauge()
                     .Name("gpuaas_nodepool_provisioning_seconds")
                     .Help("Provisioning time in use per NodePool (the spec's, then learned).")
                     .Register(*registry);
  desired_gauge_ = &telemetry::BuildGauge()
                        .Name("gpuaas_nodepool_desired_nodes")
                        .Help(
                            "Nodes each NodePool's last plan wants (minNodes, deadlines, "
                            "backlog and forecast, within maxNodes).")
                        .Register(*registry);
  demand_gauge_ = &telemetry::BuildGauge()
                       .Name("gpuaas_nodepool_demand_gpus")
                       .Help(
                           "GPU demand of each NodePool's flavor (admitted plus waiting for "
                           "nodes): now, and forecast one provisioning time ahead.")
                       .Register(*registry);
}

PoolScaler::~PoolScaler() = default;
PoolScaler::PoolScaler(PoolScaler&&) noexcept = default;
PoolScaler& PoolScaler::operator=(PoolScaler&&) noexcept = default;

void PoolScaler::set_policy(const policy::PolicySet& set) {
  std::vector<Pool> next;
  for (const auto& spec : set.node_pools) {
    Pool p;
    // A pool that keeps its name keeps what it learned and what it asked for.
    for (auto& old : pools_)
      if (old.spec.name == spec.name) p = std::move(old);
    const bool fresh = !p.trend || p.spec.forecast_window != spec.forecast_window;
    p.spec = spec;
    if (fresh) p.trend = std::make_unique<DemandTrend>(spec.forecast_window);
    if (p.backoff_next.count() == 0) p.backoff_next = spec.backoff;
    p.quota_milli = flavor_quota(set, spec.flavor);
    next.push_back(std::move(p));
  }
  pools_ = std::move(next);
}

void PoolScaler::count_scale_action(const std::string& pool, const std::string& direction,
                                    const std::string& rule, double n) {
  scale_counts_[{pool, direction, rule}] += n;
  if (scale_actions_)
    scale_actions_->Add({{"pool", pool}, {"direction", direction}, {"rule", rule}}).Increment(n);
}

void PoolScaler::count_failures(const std::string& pool, double n) {
  failure_counts_[pool] += n;
  if (failures_) failures_->Add({{"pool", pool}}).Increment(n);
}

bool PoolScaler::in_pool(const Pool& pool, const KubeObject& node) const {
  for (const auto& [k, v] : pool.spec.node_selector) {
    auto it = node.meta.labels.find(k);
    if (it == node.meta.labels.end() || it->second != v) return false;
  }
  return true;
}

milliseconds PoolScaler::lead(const Pool& pool) const {
  if (pool.lead_samples > 0)
    return milliseconds(static_cast<int64_t>(std::llround(pool.lead_seconds * 1000)));
  return pool.spec.provisioning_time;
}

int32_t PoolScaler::replicas(const Pool& pool) const {
  return static_cast<int32_t>(pool.nodes.size() - pool.removing.size() + pool.asked.size());
}

void PoolScaler::fail(Pool& pool, wire::EventTime now, const std::string& what, int64_t nodes) {
  pool.failures += nodes;
  if (pool.backoff_until != now) {  // one backoff step per scan, however many nodes failed
    pool.backoff_until = now + pool.backoff_next;
    pool.backoff_next = std::min(pool.backoff_next * 2, pool.spec.max_backoff);
  }
  pool.last_note = what + "; no scale-out until " + wire::format_rfc3339(pool.backoff_until);
  count_failures(pool.spec.name, static_cast<double>(nodes));
  spdlog::warn("NodePool {}: {}", pool.spec.name, pool.last_note);
}

// The nodes as they are now: new ones answer the oldest request, Ready ones teach the
// provisioning time, those that never come up are given up on.
void PoolScaler::scan(Pool& pool, const core::ClusterModel& model, wire::EventTime now,
                      Output& out) {
  std::set<std::string> seen;
  for (const auto& [name, n] : model.nodes()) {
    if (!in_pool(pool, n)) continue;
    seen.insert(name);
    auto [it, fresh] = pool.nodes.emplace(name, NodeState{});
    NodeState& st = it->second;
    if (fresh) {
      st.first_seen = now;
      if (!pool.asked.empty()) {
        st.asked_at = pool.asked.front();
        pool.asked.pop_front();
      }
    }
    if (!st.up && ready_with_gpus(n)) {
      st.up = true;
      if (st.asked_at) {
        const double s = std::chrono::duration<double>(now - *st.asked_at).count();
        pool.lead_seconds = pool.lead_samples == 0 ? s : 0.7 * pool.lead_seconds + 0.3 * s;
        ++pool.lead_samples;
        pool.backoff_next = pool.spec.backoff;  // it works again
      }
    }
  }
  for (auto it = pool.nodes.begin(); it != pool.nodes.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    pool.unneeded_since.erase(it->first);
    pool.draining.erase(it->first);
    pool.removing.erase(it->first);
    cordoned_.erase(it->first);
    it = pool.nodes.erase(it);
  }
  const auto bound = pool.spec.max_node_provision_time;
  // Asked for, never registered.
  int32_t lost = 0;
  while (!pool.asked.empty() && now - pool.asked.front() >= bound) {
    pool.asked.pop_front();
    ++lost;
  }
  if (lost > 0) {
    fail(pool, now,
         std::to_string(lost) + " node(s) asked for did not register within " + dur(bound), lost);
    if (pool.spec.target.kind != policy::ScaleTargetKind::kProvisioningRequest)
      scale_to(pool, replicas(pool), 0, "scaleout/giveUp", pool.last_note, now, out);
  }
  // Registered, never Ready with GPUs.
  for (auto& [name, st] : pool.nodes) {
    // Only nodes gpuaas asked for: one that was there before is not ours to give up on.
    if (st.up || !st.asked_at || pool.removing.count(name)) continue;
    if (now - *st.asked_at < bound) continue;
    const KubeObject& n = model.nodes().at(name);
    fail(pool, now, "node " + name + " did not become Ready with GPUs within " + dur(bound), 1);
    remove_node(pool, n, "scaleout/giveUp", pool.last_note, now, out);
  }
}

void PoolScaler::scale_to(Pool& pool, int32_t r, int32_t added, const std::string& rule,
                          const std::string& why, wire::EventTime now, Output& out) {
  const auto& t = pool.spec.target;
  switch (t.kind) {
    case policy::ScaleTargetKind::kAction:
      out.actions.push_back(make(t.api_version, "NodePool", "", t.name, v1::Action::SCALE,
                                 {{"replicas", r}}, rule, why));
      break;
    case policy::ScaleTargetKind::kMachineSet:
      out.actions.push_back(make(t.api_version, "MachineSet", t.namespace_, t.name,
                                 v1::Action::SCALE, {{"replicas", r}}, rule, why));
      break;
    case policy::ScaleTargetKind::kProvisioningRequest: {
      if (added <= 0) break;  // cluster-autoscaler removes what it provisioned
      const std::string name =
          (t.name.empty() ? pool.spec.name : t.name) + "-" + std::to_string(++pool.requests);
      nlohmann::json pr = {
          {"apiVersion", t.api_version},
          {"kind", "ProvisioningRequest"},
          {"metadata",
           {{"name", name},
            {"namespace", t.namespace_},
            {"annotations", {{"gpuaas.io/node-pool", pool.spec.name}}}}},
          {"spec",
           {{"provisioningClassName", t.provisioning_class},
            {"podSets", {{{"podTemplateRef", {{"name", t.pod_template}}}, {"count", added}}}}}}};
      out.actions.push_back(make(t.api_version, "ProvisioningRequest", t.namespace_, name,
                                 v1::Action::CREATE, pr, rule, why));
      break;
    }
  }
  (void)now;
  count_scale_action(pool.spec.name, added > 0 ? "up" : "down", rule);
}

void PoolScaler::cordon(const KubeObject& node, bool on, const std::string& rule,
                        const std::string& why, Output& out) {
  nlohmann::json body = {
      {"spec", {{"unschedulable", on}}},
      {"metadata",
       {{"annotations", {{kScaleInAnnotation, on ? nlohmann::json(rule) : nlohmann::json()}}}}}};
  out.actions.push_back(
      make("v1", "Node", "", node.meta.name, v1::Action::MERGE_PATCH, body, rule, why));
  if (on) {
    cordoned_.insert(node.meta.name);
  } else {
    cordoned_.erase(node.meta.name);
  }
}

// The node is named first (Cluster API's delete-machine annotation on its Machine), then the
// replica count drops, so that the MachineSet removes this node and no other.
bool PoolScaler::remove_node(Pool& pool, const KubeObject& node, const std::string& rule,
                             const std::string& why, wire::EventTime now, Output& out) {
  const auto& t = pool.spec.target;
  if (t.kind == policy::ScaleTargetKind::kMachineSet &&
      node.meta.annotations.find(kMachineAnnotation) == node.meta.annotations.end()) {
    // Scaling down without naming the Machine lets the MachineSet pick one, maybe a busy one.
    pool.last_note = "node " + node.meta.name + " has no " + kMachineAnnotation +
                     " annotation: it cannot be named for removal, so it stays";
    spdlog::warn("NodePool {}: {}", pool.spec.name, pool.last_note);
    return false;
  }
  if (!cordoned(node.meta.name)) cordon(node, true, rule, why, out);
  pool.removing.insert(node.meta.name);
  pool.unneeded_since.erase(node.meta.name);
  pool.draining.erase(node.meta.name);
  const int32_t r = replicas(pool);
  switch (t.kind) {
    case policy::ScaleTargetKind::kAction:
      out.actions.push_back(make(t.api_version, "NodePool", "", t.name, v1::Action::SCALE,
                                 {{"replicas", r}, {"nodesToRemove", {node.meta.name}}}, rule,
                                 why));
      break;
    case policy::ScaleTargetKind::kMachineSet: {
      auto m = node.meta.annotations.find(kMachineAnnotation);
      auto ns = node.meta.annotations.find(kMachineNamespaceAnnotation);
      const std::string machine_ns =
          ns != node.meta.annotations.end() ? std::string(ns->second) : t.namespace_;
      const std::string api = t.api_version;
      out.actions.push_back(make(
          api, "Machine", machine_ns,
          m != node.meta.annotations.end() ? std::string(m->second) : "", v1::Action::MERGE_PATCH,
          {{"metadata", {{"annotations", {{kDeleteMachine, "yes"}}}}}}, rule, why));
      out.actions.push_back(make(api, "MachineSet", t.namespace_, t.name, v1::Action::SCALE,
                                 {{"replicas", r}}, rule, why));
      break;
    }
    case policy::ScaleTargetKind::kProvisioningRequest:
      break;  // cordoned and empty: cluster-autoscaler's scale-down removes it
  }
  (void)now;
  count_scale_action(pool.spec.name, "down", rule);
  return true;
}

void PoolScaler::scale_out(Pool& pool, const PlanInput& in, const Plan& plan, wire::EventTime now,
                           Output& out) {
  const int32_t add = plan.desired - in.nodes;
  if (add <= 0) return;
  if (now < pool.backoff_until) {
    pool.last_note = "would add " + std::to_string(add) + " node(s) (" + plan.rule +
                     "), backing off until " + wire::format_rfc3339(pool.backoff_until);
    return;
  }
  for (int32_t i = 0; i < add; ++i) pool.asked.push_back(now);
  pool.launched += add;
  pool.last_scale_up = now;
  const std::string why =
      "add " + std::to_string(add) + " node(s) (" + std::to_string(in.nodes) + " -> " +
      std::to_string(plan.desired) + "): " + plan.reason + "; provisioning time " + dur(in.lead) +
      (pool.lead_samples > 0 ? " (learned from " + std::to_string(pool.lead_samples) + " node(s))"
                             : " (the spec's)");
  spdlog::info("NodePool {}: {} [{}]", pool.spec.name, why, plan.rule);
  scale_to(pool, replicas(pool), add, plan.rule, why, now, out);
}

PoolScaler::Output PoolScaler::pass(const core::ClusterModel& model,
                                    admission::Scheduler& scheduler,
                                    const std::set<std::string>& waking, wire::EventTime now,
                                    std::vector<admission::NodeDemand> serving) {
  if (const auto& hook = pass_hook()) hook(*this, scheduler.policy());
  Output out;
  next_scan_ = now + kScanInterval;
  auto demand = scheduler.node_demand();
  demand.insert(demand.end(), std::make_move_iterator(serving.begin()),
                std::make_move_iterator(serving.end()));
  // One walk over the pods for every pool's scale-in.
  PodsByNode pods_by_node;
  for (const auto& [key, pod] : model.pods()) {
    if (!pod.pod || pod.pod->node_name.empty()) continue;
    if (pod.pod->phase == "Succeeded" || pod.pod->phase == "Failed") continue;
    if (pod.meta.controller && pod.meta.controller->kind == "DaemonSet") continue;
    pods_by_node[pod.pod->node_name].push_back(&pod);
  }
  // Pending work goes to the first of its flavors whose pool can still grow (or that has no
  // pool: then no pool of ours serves it), as Kueue's flavor fungibility tries the next flavor.
  std::map<std::string, const Pool*> by_flavor;
  for (const auto& pool : pools_) by_flavor[pool.spec.flavor] = &pool;
  for (auto& d : demand) {
    if (!d.pending || d.flavors.size() < 2) continue;
    for (const auto& f : d.flavors) {
      auto it = by_flavor.find(f);
      if (it == by_flavor.end() || replicas(*it->second) < it->second->spec.max_nodes) {
        d.flavor = f;
        break;
      }
    }
  }
  for (auto& pool : pools_) {
    scan(pool, model, now, out);
    if (!pool.observed_since) pool.observed_since = now;
    // The first look only learns the nodes: at start-up the stream may not have brought them all.
    if (now - *pool.observed_since < kScanInterval) continue;
    PlanInput in;
    in.now = to_time(now);
    in.lead = lead(pool);
    in.gpus_per_node = pool.spec.gpus_per_node;
    in.min_nodes = pool.spec.min_nodes;
    in.max_nodes = pool.spec.max_nodes;
    in.max_surge = pool.spec.max_surge;
    in.quota_milli = pool.quota_milli;
    std::vector<admission::NodeDemand> admitted;
    std::map<std::string, int64_t> placed;
    for (const auto& d : demand) {
      if (d.flavor != pool.spec.flavor) continue;
      if (d.pending) {
        in.pending.push_back(d);
        if (waking.count(d.workload)) in.urgent.insert(d.workload);
      } else {
        for (const auto& [node, milli] : d.nodes) placed[node] += milli;
        admitted.push_back(d);
      }
    }
    in.admitted = admitted;
    int32_t registered = 0;
    for (const auto& [name, st] : pool.nodes) {
      if (pool.removing.count(name) || pool.draining.count(name)) continue;
      ++registered;
      const KubeObject& n = model.nodes().at(name);
      if (st.up && ready_with_gpus(n) && !n.node->unschedulable && !cordoned(name)) {
        const int64_t total = gpu_of(n.node->allocatable);
        const int64_t used = std::max(gpu_of(model.node_requested(name)), placed[name]);
        in.ready.push_back({name, std::max<int64_t>(0, total - used), total});
      } else if (!st.up &&
                 (st.asked_at || now - st.first_seen < pool.spec.max_node_provision_time)) {
        in.coming.push_back(to_time(st.asked_at.value_or(st.first_seen)) + in.lead);
      }
    }
    for (wire::EventTime t : pool.asked) in.coming.push_back(to_time(t) + in.lead);
    in.nodes = registered + static_cast<int32_t>(pool.asked.size());
    double demand_milli = 0;
    for (const auto& d : in.admitted)
      for (const auto& p : d.pods) demand_milli += static_cast<double>(p.count * p.gpu_milli);
    for (const auto& d : in.pending)
      for (const auto& p : d.pods) demand_milli += static_cast<double>(p.count * p.gpu_milli);
    pool.trend->observe(in.now, demand_milli);
    // The demand now plus what its trend adds by the time a node asked for now is up.
    if (pool.spec.forecast && pool.trend->forecast(in.lead))
      in.forecast_milli = demand_milli + pool.trend->growth(in.lead);
    const Plan plan = plan_pool(in);
    pool.last_plan = plan;
    scale_out(pool, in, plan, now, out);
    scale_in(pool, model, scheduler, admitted, pods_by_node, plan, now, out);

    if (nodes_gauge_) {
      int64_t ready = 0, coming = static_cast<int64_t>(pool.asked.size());
      for (const auto& [name, st] : pool.nodes)
        if (!pool.removing.count(name) && !pool.draining.count(name)) (st.up ? ready : coming)++;
      const std::string& p = pool.spec.name;
      nodes_gauge_->Add({{"pool", p}, {"state", "ready"}}).Set(static_cast<double>(ready));
      nodes_gauge_->Add({{"pool", p}, {"state", "coming"}}).Set(static_cast<double>(coming));
      nodes_gauge_->Add({{"pool", p}, {"state", "draining"}})
          .Set(static_cast<double>(pool.draining.size()));
      nodes_gauge_->Add({{"pool", p}, {"state", "removing"}})
          .Set(static_cast<double>(pool.removing.size()));
      desired_gauge_->Add({{"pool", p}}).Set(static_cast<double>(plan.desired));
      lead_gauge_->Add({{"pool", p}}).Set(std::chrono::duration<double>(in.lead).count());
      demand_gauge_->Add({{"pool", p}, {"horizon", "now"}}).Set(demand_milli / 1000);
      demand_gauge_->Add({{"pool", p}, {"horizon", "forecast"}})
          .Set(in.forecast_milli.value_or(demand_milli) / 1000);
    }
  }
  return out;
}

std::map<std::string, int64_t> PoolScaler::coming_gpus() const {
  std::map<std::string, int64_t> out;
  for (const auto& pool : pools_)
    if (!pool.asked.empty())
      out[pool.spec.flavor] += static_cast<int64_t>(pool.asked.size()) * pool.spec.gpus_per_node;
  return out;
}

std::string PoolScaler::json(wire::EventTime now) const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& pool : pools_) {
    int64_t ready = 0, unready = 0;
    for (const auto& [name, st] : pool.nodes) (st.up ? ready : unready)++;
    const auto& p = pool.last_plan;
    out.push_back({{"name", pool.spec.name},
                   {"flavor", pool.spec.flavor},
                   {"target", policy::to_string(pool.spec.target.kind)},
                   {"replicas", replicas(pool)},
                   {"min_nodes", pool.spec.min_nodes},
                   {"max_nodes", pool.spec.max_nodes},
                   {"nodes",
                    {{"ready", ready},
                     {"not_ready", unready},
                     {"asked", pool.asked.size()},
                     {"draining", pool.draining.size()},
                     {"removing", pool.removing.size()}}},
                   {"nodes_launched", pool.launched},
                   {"provisioning_failures", pool.failures},
                   {"provisioning_seconds", std::chrono::duration<double>(lead(pool)).count()},
                   {"provisioning_learned_from", pool.lead_samples},
                   {"backoff_until", now < pool.backoff_until
                                         ? nlohmann::json(wire::format_rfc3339(pool.backoff_until))
                                         : nlohmann::json(nullptr)},
                   {"plan",
                    {{"desired", p.desired},
                     {"keep", p.keep},
                     {"add",
                      {{"min_nodes", p.add_min},
                       {"deadline", p.add_deadline},
                       {"backlog", p.add_backlog},
                       {"forecast", p.add_forecast}}},
                     {"demand_gpus", p.demand_milli / 1000},
                     {"backlog_gpus", static_cast<double>(p.backlog_milli) / 1000},
                     {"deadlines_at_risk", p.deadlines_at_risk},
                     {"deadlines_saved", p.deadlines_saved},
                     {"rule", p.rule},
                     {"reason", p.reason}}},
                   {"note", pool.last_note}});
  }
  return out.dump();
}

}  // namespace gpuaas::core::scaleout
