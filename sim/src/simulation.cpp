// The run loop: the agenda in time order; after each instant the events go to gpuaasd, its
// actions come back and are applied, until the instant is quiet. Nodes, node pools and the
// cluster-autoscaler of the kueue-like baseline live here; workloads in simulation_workloads.cpp.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "gpuaas/policy/policy_loader.hpp"
#include "gpuaas/sim/default_policy.hpp"
#include "sim_objects.hpp"
#include "simulation_state.hpp"

namespace gpuaas::sim {

using nlohmann::json;

namespace {
constexpr Millis kAutoscalerScan{std::chrono::seconds(10)};
constexpr Millis kScaleDownUnneeded{std::chrono::minutes(10)};  // cluster-autoscaler's default
constexpr Millis kMaxProvisionTime{std::chrono::minutes(15)};   // its max-node-provision-time
constexpr int kMaxSettleRounds = 1000;
}  // namespace

Simulation::Simulation(const Scenario& scenario, const SimOptions& options)
    : scenario_(scenario),
      options_(options),
      cluster_(options.policy == Baseline::kGpuaas ? BindStrategy::kMostAllocated
                                                   : BindStrategy::kLeastAllocated),
      autoscaler_(options.policy == Baseline::kKueueLike) {}

Status Simulation::setup() {
  result_.policy = name_of(options_.policy);
  result_.scenario = scenario_.name;
  result_.seed = options_.seed;
  result_.simulated_seconds = std::chrono::duration<double>(scenario_.duration).count();
  now_ = last_ = scenario_.start;
  end_ = scenario_.start + scenario_.duration;

  std::vector<PolicyText> base = options_.policies;
  if (base.empty() && !scenario_.policy_files.empty()) {
    auto read = read_policy_files(scenario_.policy_files);
    if (!read) return read.status();
    base = std::move(read).value();
  }
  if (base.empty()) base = default_policy(scenario_);
  auto texts = policy_for(options_.policy, base);
  if (!texts) return texts.status();
  if (options_.policy == Baseline::kGpuaas) {
    auto pooled = with_node_pools(*texts, scenario_);
    if (!pooled) return pooled.status();
    texts = std::move(pooled);
  }
  auto policy_set = policy_set_json(*texts);
  if (!policy_set) return policy_set.status();
  {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& p : *texts) pairs.emplace_back(p.name, p.text);
    auto loaded = policy::parse_policy_texts(pairs);
    for (const auto& f : loaded.set.flavors) flavor_labels_[f.name] = f.node_labels;
    for (const auto& np : loaded.set.node_pools) node_pool_flavor_[np.name] = np.flavor;
  }
  for (const auto& p : scenario_.node_pools) {
    if (!flavor_labels_.count(p.flavor))
      return Status::invalid(scenario_.file + ": node pool " + p.name + ": flavor \"" + p.flavor +
                             "\" is not a ResourceFlavor of the policies");
    pools_[p.name] = &p;
  }

  DaemonDriver::Options d;
  d.server = options_.server;
  d.plugins_dir = options_.plugins_dir;
  auto driver = DaemonDriver::start(d);
  if (!driver) return driver.status();
  driver_ = std::move(driver).value();
  driver_->object(Change::kModified, json::parse(*policy_set), now_);

  std::set<std::string> namespaces;
  for (const auto& inst : expand_workloads(scenario_)) {
    SimWorkload w;
    w.instance = inst;
    w.spec = inst.spec;
    w.kind = kind_model(inst.spec->kind);
    if (w.kind == nullptr)
      return Status::invalid(inst.spec->at + ": no simulator model of kind " + inst.spec->kind);
    w.key = inst.spec->namespace_ + "/" + inst.name;
    if (auto dup = by_key_.find(w.key); dup != by_key_.end())
      return Status::invalid(inst.spec->at + ": workload " + w.key + " (a copy of " +
                             inst.spec->name + ") has the name of another, written at " +
                             workloads_[dup->second].spec->at);
    if (inst.spec->deadline) w.deadline = scenario_.start + *inst.spec->deadline;
    by_key_[w.key] = workloads_.size();
    namespaces.insert(inst.spec->namespace_);
    if (serves_requests(w)) {
      serving_.push_back(workloads_.size());
      auto& svc = result_.services[w.key];
      svc.tenant = inst.spec->namespace_;
      svc.quality = inst.spec->quality;
    }
    workloads_.push_back(std::move(w));
  }
  for (const auto& ns : namespaces) {
    driver_->object(
        Change::kAdded,
        {{"apiVersion", "v1"},
         {"kind", "Namespace"},
         {"metadata",
          {{"name", ns}, {"uid", "ns-" + ns}, {"labels", {{"kubernetes.io/metadata.name", ns}}}}}},
        now_);
  }
  for (const auto& p : scenario_.node_pools)
    for (int32_t i = 0; i < p.nodes; ++i) add_node(p, true);
  for (std::size_t i = 0; i < workloads_.size(); ++i) {
    agenda_.at(scenario_.start + workloads_[i].instance.submit_at, [this, i] { submit(i); });
  }
  for (Time t = scenario_.start; t < end_; t += scenario_.tick_interval)
    agenda_.at(t, [this] { driver_->tick(now_); });
  for (Time t = scenario_.start; t < end_; t += scenario_.metrics_interval)
    agenda_.at(t, [this] { publish_metrics(); });
  const Millis step =
      std::max(Millis(1000), scenario_.duration / std::max(1, options_.series_points));
  for (Time t = scenario_.start; t <= end_; t += step) agenda_.at(t, [this] { sample_series(); });
  if (autoscaler_) {
    for (Time t = scenario_.start; t < end_; t += kAutoscalerScan)
      agenda_.at(t, [this] { autoscale(); });
  }
  if (std::any_of(serving_.begin(), serving_.end(),
                  [this](std::size_t i) { return autoscaled(workloads_[i]); })) {
    for (Time t = scenario_.start; t < end_; t += kpa::kTick) agenda_.at(t, [this] { kpa_tick(); });
  }
  return Status::ok();
}

Result<RunResult> Simulation::run() {
  const auto wall = std::chrono::steady_clock::now();
  if (auto s = setup(); !s) return s;
  if (auto s = settle(); !s) return s;
  refresh_quota_held();
  quota_read_at_ = driver_->events_published();
  double reported = -1;
  while (!agenda_.items.empty() && agenda_.items.top().at <= end_) {
    const Time t = agenda_.items.top().at;
    advance(t);
    while (!agenda_.items.empty() && agenda_.items.top().at == t) {
      auto f = agenda_.items.top().f;
      agenda_.items.pop();
      f();
    }
    if (auto s = settle(); !s) return s;
    // gpuaasd's answers change only with the events it was sent.
    if (driver_->events_published() != quota_read_at_) {
      refresh_quota_held();
      quota_read_at_ = driver_->events_published();
    }
    const double done = std::chrono::duration<double>(t - scenario_.start).count() /
                        std::chrono::duration<double>(scenario_.duration).count();
    if (options_.progress && done - reported >= 0.01) {
      options_.progress(done);
      reported = done;
    }
  }
  advance(end_);
  // The daemon's clock to the end too, so its ledger covers the same span (what it decides at
  // that instant is not carried out: the run is over).
  driver_->tick(end_);
  if (auto last = driver_->settle(); !last) return last.status();
  result_.daemon_report = driver_->report_json();
  finish_accounts();
  result_.events = static_cast<int64_t>(driver_->events_published());
  result_.deadlettered = static_cast<int64_t>(driver_->deadlettered());
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  if (options_.progress) options_.progress(1.0);
  return result_;
}

Status Simulation::settle() {
  for (int round = 0; round < kMaxSettleRounds; ++round) {
    bind_pending();
    auto actions = driver_->settle();
    if (!actions) return actions.status();
    if (actions->empty()) return Status::ok();
    result_.actions += static_cast<int64_t>(actions->size());
    for (const auto& a : *actions) {
      ++result_.actions_by_rule[a.rule()];
      if (options_.record_decisions) record_decision(a);
      apply(a);
    }
  }
  return Status::internal("gpuaasd and the simulator did not settle within " +
                          std::to_string(kMaxSettleRounds) + " rounds at one instant");
}

void Simulation::record_decision(const v1::Action& a) {
  const auto& target = a.target();
  DecisionRecord d;
  d.t = std::chrono::duration<double>(now_ - scenario_.start).count();
  d.target = target.kind() + " " + (target.namespace_().empty() ? "" : target.namespace_() + "/") +
             target.name();
  d.operation = v1::Action::Operation_Name(a.operation());
  d.rule = a.rule();
  d.reason = a.reason();
  d.body = a.body_json();
  result_.decisions.push_back(std::move(d));
}

void Simulation::apply(const v1::Action& a) {
  const auto& target = a.target();
  if (target.kind() == "NodePool" && a.operation() == v1::Action::SCALE) {
    // gpuaasd's scale target: {"replicas": N, "nodesToRemove": [names]} (docs/scale-out.md).
    json body = json::parse(a.body_json(), nullptr, false);
    if (!body.is_object()) return;
    std::vector<std::string> remove;
    if (body.contains("nodesToRemove") && body["nodesToRemove"].is_array())
      for (const auto& n : body["nodesToRemove"])
        if (n.is_string()) remove.push_back(n.get<std::string>());
    std::string pool = target.name();
    if (!pools_.count(pool)) {  // a NodePool named otherwise: the scenario pool of its flavor
      auto f = node_pool_flavor_.find(pool);
      for (const auto& [name, spec] : pools_)
        if (f != node_pool_flavor_.end() && spec->flavor == f->second) pool = name;
    }
    const int64_t replicas = body.value("replicas", int64_t{-1});
    if (replicas >= 0) scale_pool(pool, static_cast<int32_t>(replicas), a.reason(), remove);
    return;
  }
  if (target.kind() == "Node" && a.operation() == v1::Action::MERGE_PATCH) {
    json patch = json::parse(a.body_json(), nullptr, false);
    SimNode* n = cluster_.node(target.name());
    if (n == nullptr || !patch.is_object() || !patch.contains("spec")) return;
    const json& u = patch["spec"].value("unschedulable", json());
    n->unschedulable = u.is_boolean() && u.get<bool>();
    if (n->registered) publish_node(*n, Change::kModified);
    return;
  }
  auto it = by_key_.find(target.namespace_() + "/" + target.name());
  if (it == by_key_.end()) return;
  SimWorkload& w = workloads_[it->second];
  if (w.state == WorkloadState::kUnsubmitted || w.state == WorkloadState::kDeleted) return;
  if (a.operation() != v1::Action::MERGE_PATCH) return;
  json patch = json::parse(a.body_json(), nullptr, false);
  if (patch.is_discarded()) return;
  w.object.merge_patch(patch);
  ++w.resource_version;
  w.object["metadata"]["resourceVersion"] = std::to_string(w.resource_version);
  publish_workload(it->second, Change::kModified);
  reconcile(it->second);
}

void Simulation::advance(Time t) {
  if (t <= last_) return;
  const double dt = std::chrono::duration<double>(t - last_).count();
  result_.capacity_gpu_seconds += dt * static_cast<double>(cluster_.gpus_capacity_milli()) / 1000;
  result_.allocated_gpu_seconds += dt * static_cast<double>(cluster_.gpus_allocated_milli()) / 1000;
  result_.busy_gpu_seconds += dt * static_cast<double>(busy_gpu_milli_) / 1000;
  result_.gpu_seconds_at_zero += dt * static_cast<double>(zero_gpu_milli_) / 1000;
  // Idle reserved: at zero with the quota still held (knative: always; gpuaas: as explain says).
  result_.idle_reserved_gpu_seconds += dt * static_cast<double>(held_zero_milli_) / 1000;
  for (const auto& [ns, m] : tenant_held_milli_)
    result_.tenants[ns].idle_reserved_gpu_seconds += dt * static_cast<double>(m) / 1000;
  for (const auto& [ns, m] : tenant_alloc_milli_)
    result_.tenants[ns].allocated_gpu_seconds += dt * static_cast<double>(m) / 1000;
  for (const auto& [ns, m] : tenant_busy_milli_)
    result_.tenants[ns].busy_gpu_seconds += dt * static_cast<double>(m) / 1000;
  for (std::size_t i : serving_) {
    const SimWorkload& w = workloads_[i];
    if (w.gpu_milli_bound > 0)
      result_.services[w.key].allocated_gpu_seconds +=
          dt * static_cast<double>(w.gpu_milli_bound) / 1000;
  }
  for (const auto& [name, n] : cluster_.nodes()) {
    result_.node_seconds += dt;
    result_.pools[n.pool].node_seconds += dt;
    result_.cost += dt / 3600.0 * pools_.at(n.pool)->price_per_node_hour;
  }
  last_ = t;
  now_ = t;
}

std::map<std::string, std::string> Simulation::node_labels(const NodePoolSpec& pool,
                                                           const std::string& name) {
  std::map<std::string, std::string> labels = flavor_labels_[pool.flavor];
  labels[kFlavorLabel] = pool.flavor;
  labels["gpuaas.io/node-pool"] = pool.name;
  labels["kubernetes.io/hostname"] = name;
  return labels;
}

void Simulation::add_node(const NodePoolSpec& pool, bool at_start) {
  const std::string name = pool.name + "-" + std::to_string(pool_next_[pool.name]++);
  cluster_.add_node(name, pool, node_labels(pool, name));
  ++result_.nodes_added;
  result_.max_nodes = std::max<int64_t>(result_.max_nodes, cluster_.nodes().size());
  PoolFigures& figures = result_.pools[pool.name];
  if (!at_start) ++figures.nodes_launched;
  int64_t in_pool = 0;
  for (const auto& [n, node] : cluster_.nodes()) in_pool += node.pool == pool.name ? 1 : 0;
  figures.max_nodes = std::max(figures.max_nodes, in_pool);
  if (at_start) {
    node_ready(name);
    return;
  }
  agenda_.at(now_ + pool.provisioning_time, [this, name] { node_ready(name); });
}

void Simulation::node_ready(const std::string& name) {
  SimNode* n = cluster_.node(name);
  if (n == nullptr) return;  // removed while it was provisioning
  n->registered = true;
  // failProvisioning is chaos for scale-out: the nodes the pool starts with are fine.
  const NodePoolSpec& pool = *pools_.at(n->pool);
  n->ready = now_ == scenario_.start || !pool.fail_provisioning;
  n->ready_at = now_;
  if (n->ready && now_ != scenario_.start && pool.gpu_ready_delay.count() > 0) {
    // Ready first; the device plugin reports the GPUs later.
    n->gpus_later = static_cast<int32_t>(n->device_free.size());
    n->device_free.clear();
    agenda_.at(now_ + pool.gpu_ready_delay, [this, name] {
      SimNode* m = cluster_.node(name);
      if (m == nullptr || m->gpus_later == 0) return;
      m->device_free.assign(static_cast<std::size_t>(m->gpus_later), 1000);
      m->gpus_later = 0;
      publish_node(*m, Change::kModified);
    });
  }
  publish_node(*n, Change::kAdded);
}

void Simulation::publish_node(const SimNode& n, Change c) {
  driver_->object(c, node_object(n, ++node_rv_), now_);
}

// Grows by provisioning new nodes; shrinks by removing nodes still provisioning, then Ready nodes
// without pods. A node with pods is never removed: busy work is not killed.
void Simulation::scale_pool(const std::string& pool_name, int32_t target, const std::string&,
                            const std::vector<std::string>& remove) {
  auto pit = pools_.find(pool_name);
  if (pit == pools_.end()) return;
  const NodePoolSpec& pool = *pit->second;
  target = std::clamp(target, pool.min_nodes, pool.max_nodes);
  auto drop = [&](const std::string& name) {
    SimNode* n = cluster_.node(name);
    if (n->registered && !n->ready) ++result_.pools[pool_name].provisioning_failures;
    if (n->registered) publish_node(*n, Change::kDeleted);
    cluster_.remove_node(name);
    node_empty_since_.erase(name);
    ++result_.nodes_removed;
  };
  for (const auto& name : remove) {  // named nodes go first, unless they hold pods
    SimNode* n = cluster_.node(name);
    if (n != nullptr && n->pool == pool_name && n->pods == 0) drop(name);
  }
  std::vector<std::string> mine;
  for (const auto& [name, n] : cluster_.nodes())
    if (n.pool == pool_name) mine.push_back(name);
  int32_t have = static_cast<int32_t>(mine.size());
  for (; have < target; ++have) add_node(pool, false);
  for (bool provisioning : {true, false}) {
    for (const auto& name : mine) {
      if (have <= target) break;
      SimNode* n = cluster_.node(name);
      if (n == nullptr || n->pods > 0 || (provisioning == n->registered)) continue;
      drop(name);
      --have;
    }
  }
}

// cluster-autoscaler, reactively: pods that no node can take make their pool grow by what they
// need (counting nodes still provisioning); a node empty for 10 minutes is removed. Nodes that
// failed to come up are given up after 15 minutes.
void Simulation::autoscale() {
  // An empty node of each pool, as it would come up: which pending pods could it take?
  std::vector<std::pair<std::string, SimNode>> probes;
  for (const auto& [name, pool] : pools_) {
    SimNode probe;
    probe.ready = true;
    probe.labels = node_labels(*pool, "probe");
    probe.device_free.assign(static_cast<std::size_t>(pool->gpus_per_node), 1000);
    probe.cpu = probe.cpu_free = pool->cpu_milli_per_node;
    probe.memory = probe.memory_free = pool->memory_bytes_per_node;
    probes.emplace_back(name, std::move(probe));
  }
  std::map<std::string, std::vector<const SimPod*>> waiting;  // pool -> pods it could take
  for (const auto& [id, p] : cluster_.pods()) {
    if (!p.node.empty()) continue;
    for (const auto& [name, probe] : probes) {
      if (cluster_.fits(probe, p)) {
        waiting[name].push_back(&p);
        break;
      }
    }
  }
  for (auto& [name, pods] : waiting) {
    const NodePoolSpec& pool = *pools_.at(name);
    int64_t need_gpu = 0, provisioning = 0, have = 0;
    for (const SimPod* p : pods) need_gpu += p->gpu_milli;
    for (const auto& [n, node] : cluster_.nodes()) {
      if (node.pool != name) continue;
      ++have;
      if (!node.registered) provisioning += node.gpu_total_milli();
    }
    const int64_t per_node = std::max<int64_t>(1, int64_t{pool.gpus_per_node} * 1000);
    const int64_t more = (std::max<int64_t>(0, need_gpu - provisioning) + per_node - 1) / per_node;
    if (more > 0) scale_pool(name, static_cast<int32_t>(have + more), "pending pods");
  }
  std::map<std::string, int32_t> target;
  for (const auto& [name, n] : cluster_.nodes()) {
    if (!n.registered) continue;
    if (!n.ready && now_ - n.ready_at >= kMaxProvisionTime - pools_.at(n.pool)->provisioning_time) {
      node_empty_since_[name] = now_ - kScaleDownUnneeded;  // give up on it now
    } else if (n.pods > 0) {
      node_empty_since_.erase(name);
      continue;
    }
    auto [it, fresh] = node_empty_since_.emplace(name, now_);
    if (!fresh && now_ - it->second >= kScaleDownUnneeded) target[n.pool] += 1;
  }
  for (const auto& [pool, unneeded] : target) {
    int32_t have = 0;
    for (const auto& [name, n] : cluster_.nodes()) have += n.pool == pool ? 1 : 0;
    scale_pool(pool, have - unneeded, "unneeded nodes");
  }
}

void Simulation::publish_metrics() {
  // dcgm-exporter's GPU utilisation, one sample per GPU device a running pod holds.
  std::map<std::string, v1::MetricBatch> by_ns;
  for (const auto& [id, p] : cluster_.pods()) {
    if (!p.running || p.gpu_milli <= 0) continue;
    const double util = gpu_util(workloads_[p.workload]);
    for (const auto& [device, milli] : p.devices) {
      auto* s = by_ns[p.namespace_].add_samples();
      s->set_name("DCGM_FI_DEV_GPU_UTIL");
      s->set_value(util);
      add_metric_labels(*s, {{"gpu", std::to_string(device)},
                             {"UUID", "GPU-" + p.node + "-" + std::to_string(device)},
                             {"Hostname", p.node},
                             {"namespace", p.namespace_},
                             {"pod", p.name},
                             {"container", "main"}});
    }
  }
  // Knative's queue-proxy counter on each serving pod: the requests it took since it started
  // (with the latency model, those its slots took; without, the service's requests shared evenly
  // by its pods), and with the latency model vLLM's own series of the replica.
  for (std::size_t i : serving_) run_requests(i, now_ms());
  for (const auto& [id, p] : cluster_.pods()) {
    SimWorkload& w = workloads_[p.workload];
    if (!p.running || !serves_requests(w) || w.pods.empty()) continue;
    auto vllm = w.vllm.find(id);
    auto* s = by_ns[p.namespace_].add_samples();
    s->set_name("revision_request_count");
    s->set_value(vllm != w.vllm.end()
                     ? static_cast<double>(vllm->second.taken())
                     : static_cast<double>(requests_between(w, p.running_since, now_)) /
                           static_cast<double>(w.pods.size()));
    add_metric_labels(*s, {{"namespace", p.namespace_},
                           {"pod", p.name},
                           {"configuration_name", w.instance.name + "-predictor"}});
    if (vllm != w.vllm.end())
      vllm->second.add_samples(by_ns[p.namespace_], now_ms(), p.namespace_, p.name);
  }
  // The ingress's counter of services gpuaas scaled to zero, until they woke (no pod reports it).
  for (std::size_t i : activated_)
    if (serves_requests(workloads_[i])) add_request_count(by_ns[workloads_[i].spec->namespace_], i);
  for (auto& [ns, batch] : by_ns) driver_->metrics(ns, std::move(batch), now_);
}

void Simulation::sample_series() {
  SeriesPoint s;
  s.t = std::chrono::duration<double>(now_ - scenario_.start).count();
  for (const auto& w : workloads_)
    if (w.state == WorkloadState::kQueued || w.state == WorkloadState::kStarting) ++s.waiting;
  s.gpus_allocated = static_cast<double>(cluster_.gpus_allocated_milli()) / 1000;
  s.gpus_busy = static_cast<double>(busy_gpu_milli_) / 1000;
  s.gpus_capacity = static_cast<double>(cluster_.gpus_capacity_milli()) / 1000;
  s.nodes = static_cast<int64_t>(cluster_.nodes().size());
  result_.series.push_back(s);
}

Result<RunResult> run_simulation(const Scenario& scenario, const SimOptions& options) {
  Simulation sim(scenario, options);
  return sim.run();
}

}  // namespace gpuaas::sim
