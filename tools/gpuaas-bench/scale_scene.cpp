#include "scale_scene.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::bench::scale {
namespace {

namespace adm = gpuaas::core::admission;
using core::ClusterModel;
using nlohmann::json;
using wire::EventTime;
using Minutes = std::chrono::minutes;

constexpr int64_t kMilli = 1000;
constexpr int64_t kNodeCpu = 96;
constexpr int64_t kNodeMemoryGi = 1024;
constexpr int kRunChunks = 16;  // running work admitted in rounds, 5 min apart: ends spread out

adm::Time at_ms(EventTime t) { return std::chrono::time_point_cast<std::chrono::milliseconds>(t); }

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string flavor_name(int p) { return "gpu-" + std::to_string(p); }
std::string product(int p) { return "GPU-MODEL-" + std::to_string(p); }
std::string pool_name(int p) { return "pool-" + std::to_string(p); }

// A GPU cluster's mix (as gpuaas-bench admission): mostly 1 GPU, some 2, 4 and 8, a few gangs
// of whole nodes; run times log-normal around 2 h.
Spec make_spec(const ScaleBenchOptions& o, int64_t i, bool pending) {
  std::mt19937_64 rng(
      splitmix(o.seed * 0x100000001b3ULL + static_cast<uint64_t>(i) * 2 + (pending ? 1 : 0)));
  std::uniform_real_distribution<double> unit(0, 1);
  Spec s;
  s.index = i;
  s.pending = pending;
  s.tenant = std::uniform_int_distribution<int>(0, o.tenants - 1)(rng);
  const int64_t node = o.gpus_per_node;
  const double u = unit(rng);
  if (u < 0.58) {
    s.gpus = 1;
  } else if (u < 0.73) {
    s.gpus = 2;
  } else if (u < 0.85) {
    s.gpus = 4;
  } else if (u < 0.95) {
    s.gpus = 8;
  } else {
    s.gpus = node;
    s.pods = u < 0.99 ? std::uniform_int_distribution<int64_t>(2, 4)(rng)
                      : std::uniform_int_distribution<int64_t>(8, 16)(rng);
  }
  s.gpus = std::min(s.gpus, node);
  const double per_gpu_cpu = static_cast<double>(kNodeCpu) / static_cast<double>(node);
  const double per_gpu_mem = static_cast<double>(kNodeMemoryGi) / static_cast<double>(node);
  const auto g = static_cast<double>(s.gpus);
  s.cpu = std::max<int64_t>(1, std::llround(g * per_gpu_cpu * (0.5 + 0.4 * unit(rng))));
  s.memory_gi = std::max<int64_t>(1, std::llround(g * per_gpu_mem * (0.5 + 0.4 * unit(rng))));
  const double dur = std::clamp(std::exp(std::log(7200.0) + std::normal_distribution<>(0, 1)(rng)),
                                300.0, 7 * 86400.0);
  s.duration_s = static_cast<int64_t>(dur);
  if (pending && unit(rng) < o.deadline_share)
    s.deadline_s = static_cast<int64_t>(dur * (1.5 + 4.5 * unit(rng)));
  return s;
}

// Kueue's kinds and the NodePools: one flavor per pool; every ClusterQueue lists every flavor
// (rotated, so each pool is some tenants' first choice) with room for all its work, so that
// pending work waits for nodes, not for quota. Memory is not in the quota: room for a backlog
// of this size in milli-bytes would overflow the cohort's int64 sums (8.4 PiB).
std::string policy_yaml(const ScaleBenchOptions& o, const std::vector<int64_t>& pool_nodes,
                        const std::vector<int64_t>& quota_gpus) {
  std::string y;
  for (int p = 0; p < o.pools; ++p)
    y += "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: " +
         flavor_name(p) + "}\nspec: {nodeLabels: {nvidia.com/gpu.product: " + product(p) +
         "}}\n---\n";
  for (int t = 0; t < o.tenants; ++t) {
    const std::string q = std::to_string(quota_gpus[static_cast<std::size_t>(t)]);
    const std::string cpu =
        std::to_string(quota_gpus[static_cast<std::size_t>(t)] * kNodeCpu / o.gpus_per_node);
    y += "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: tenant-" +
         std::to_string(t) +
         "}\nspec:\n  cohort: all\n  namespaceSelector: {}\n  resourceGroups:\n    - "
         "coveredResources: [cpu, nvidia.com/gpu]\n"
         "      flavors:\n";
    for (int k = 0; k < o.pools; ++k)
      y += "        - name: " + flavor_name((t + k) % o.pools) +
           "\n          resources:\n            - {name: cpu, nominalQuota: " + cpu +
           "}\n            - {name: nvidia.com/gpu, nominalQuota: " + q + "}\n";
    y += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {namespace: team-" +
         std::to_string(t) + ", name: main}\nspec: {clusterQueue: tenant-" + std::to_string(t) +
         "}\n---\n";
  }
  for (int p = 0; p < o.pools; ++p) {
    const auto max_nodes = std::max<int64_t>(
        1, std::llround(static_cast<double>(pool_nodes[static_cast<std::size_t>(p)]) *
                        o.max_nodes_factor));
    y += "apiVersion: gpuaas.io/v1alpha1\nkind: NodePool\nmetadata: {name: " + pool_name(p) +
         "}\nspec:\n  flavor: " + flavor_name(p) +
         "\n  gpusPerNode: " + std::to_string(o.gpus_per_node) +
         "\n  minNodes: 0\n  maxNodes: " + std::to_string(max_nodes) +
         "\n  provisioningTime: 10m\n  scaleOut: {maxNodeProvisionTime: 15m}\n---\n";
  }
  return y;
}

void add_node(Scene& s, int p, int64_t i, EventTime at) {
  const std::string name = pool_name(p) + "-node-" + std::to_string(i);
  json labels = {{"gpuaas.io/node-pool", pool_name(p)},
                 {core::kGpuProductLabel, product(p)},
                 {"kubernetes.io/hostname", name}};
  s.apply({{"apiVersion", "v1"},
           {"kind", "Node"},
           {"metadata", {{"name", name}, {"labels", labels}}},
           {"status",
            {{"allocatable",
              {{"cpu", std::to_string(kNodeCpu)},
               {"memory", std::to_string(kNodeMemoryGi) + "Gi"},
               {"nvidia.com/gpu", std::to_string(s.o.gpus_per_node)}}},
             {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}},
          at);
  adm::NodeInfo n;  // as the admission stage's node_info reads the model's node
  n.name = name;
  for (const auto& [k, v] : labels.items()) n.labels.emplace(k, v.get<std::string>());
  n.allocatable = s.amounts(kNodeCpu, kNodeMemoryGi, s.o.gpus_per_node);
  n.ready = true;
  s.engine->upsert_node(n, at_ms(at));
}

std::string key_of(const Spec& sp) {
  core::ObjectMeta m;
  m.api_version = "batch/v1";
  m.kind = "Job";
  m.namespace_ = sp.ns();
  m.name = sp.name();
  return ClusterModel::key_of(m);
}

json job(const Spec& sp, bool suspended) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", sp.name()},
            {"namespace", sp.ns()},
            {"uid", "uid-" + sp.name()},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec", {{"suspend", suspended}, {"parallelism", sp.pods}, {"completions", sp.pods}}}};
}

// Queues a workload: its Job in the model (suspended, held for admission) and in the engine.
void submit(Scene& s, const Spec& sp, EventTime at) {
  adm::WorkloadInfo w;
  w.kind = "Job";
  w.namespace_ = sp.ns();
  w.name = sp.name();
  w.key = key_of(sp);
  w.local_queue = "main";
  w.created = at_ms(at);
  w.expected_duration = adm::Seconds(sp.duration_s);
  if (sp.deadline_s) w.deadline = at_ms(kT0) + adm::Seconds(*sp.deadline_s);
  adm::PodSetRequest ps;
  ps.name = "main";
  ps.count = sp.pods;
  ps.per_pod = s.amounts(sp.cpu, 0, sp.gpus);  // memory is not in the quota (policy_yaml)
  w.pod_sets.push_back(std::move(ps));
  if (sp.pending) s.apply(job(sp, true), at);
  s.specs.emplace(w.key, sp);
  s.engine->upsert_workload(std::move(w), at_ms(at));
}

// What the daemon sees once an admitted workload's pods are opened onto their planned nodes:
// the Job unsuspended and its pods bound there, running.
void run(Scene& s, const adm::Decision& d, EventTime at) {
  if (d.kind != adm::Decision::Kind::kAdmit) return;
  auto it = s.specs.find(d.workload);
  if (it == s.specs.end()) return;
  const Spec sp = it->second;
  s.specs.erase(it);
  s.apply(job(sp, false), at);
  const json owner = json::array({{{"apiVersion", "batch/v1"},
                                   {"kind", "Job"},
                                   {"name", sp.name()},
                                   {"uid", "uid-" + sp.name()},
                                   {"controller", true}}});
  const json requests = {{"cpu", std::to_string(sp.cpu)},
                         {"memory", std::to_string(sp.memory_gi) + "Gi"},
                         {"nvidia.com/gpu", std::to_string(sp.gpus)}};
  int64_t k = 0;
  for (const auto& group : d.placement.groups)
    for (const auto& [node, count] : group.nodes)
      for (int64_t i = 0; i < count; ++i, ++k)
        s.apply({{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata",
                  {{"name", sp.name() + "-" + std::to_string(k)},
                   {"namespace", sp.ns()},
                   {"ownerReferences", owner}}},
                 {"spec",
                  {{"nodeName", node},
                   {"containers",
                    json::array({{{"name", "main"}, {"resources", {{"requests", requests}}}}})}}},
                 {"status", {{"phase", "Running"}}}},
                at);
  ++s.running;
  s.running_pods += k;
  s.running_gpus += sp.total_gpus();
}

}  // namespace

void Scene::apply(const json& obj, EventTime at) {
  auto decoded = decoder.decode(obj.dump());
  if (!decoded.is_ok()) {
    std::cerr << "scale: " << decoded.status().message() << "\n";
    std::abort();
  }
  model.apply(wire::ChangeType::kAdded, std::move(decoded).value(), at);
}

adm::Amounts Scene::amounts(int64_t cpu_cores, int64_t memory_gi, int64_t gpus) const {
  adm::Amounts a{{cpu, cpu_cores * kMilli}, {gpu, gpus * kMilli}};
  if (memory_gi > 0) a.push_back({memory, memory_gi * (int64_t{1} << 30) * kMilli});
  std::sort(a.begin(), a.end(),
            [](const auto& x, const auto& y) { return x.resource < y.resource; });
  return a;
}

// What does not fit of the running work is dropped: the backlog is the pending work alone.
std::unique_ptr<Scene> build_scene(const ScaleBenchOptions& o) {
  auto s = std::make_unique<Scene>(o);
  for (int p = 0; p < o.pools; ++p)
    s->pool_nodes.push_back(o.nodes * (p + 1) / o.pools - o.nodes * p / o.pools);
  const int64_t capacity = o.nodes * o.gpus_per_node;
  std::vector<Spec> pending;
  pending.reserve(static_cast<std::size_t>(o.pending));
  std::vector<int64_t> quota(static_cast<std::size_t>(o.tenants), 0);
  for (int64_t i = 0; i < o.pending; ++i) {
    pending.push_back(make_spec(o, i, true));
    quota[static_cast<std::size_t>(pending.back().tenant)] += pending.back().total_gpus();
    s->pending_deadlines += pending.back().deadline_s ? 1 : 0;
  }
  // Room for its share of the running work and all its backlog, on every flavor.
  for (auto& q : quota)
    q = static_cast<int64_t>(std::ceil(1.2 * static_cast<double>(q) +
                                       1.5 * static_cast<double>(capacity) / o.tenants)) +
        o.gpus_per_node;
  auto loaded =
      policy::parse_policy_texts({{"scale-bench.yaml", policy_yaml(o, s->pool_nodes, quota)}});
  if (!loaded.ok()) {
    std::cerr << "scale: policy: " << loaded.errors.front().str() << "\n";
    return nullptr;
  }
  s->set = std::make_shared<const policy::PolicySet>(std::move(loaded.set));
  s->engine = std::make_unique<adm::Scheduler>(s->set);
  s->cpu = s->engine->resources().intern("cpu");
  s->memory = s->engine->resources().intern("memory");
  s->gpu = s->engine->resources().intern("nvidia.com/gpu");

  const EventTime start = kT0 - Minutes(5) * (kRunChunks + 1);
  s->model.advance(start);
  for (int p = 0; p < o.pools; ++p)
    for (int64_t i = 0; i < s->pool_nodes[static_cast<std::size_t>(p)]; ++i)
      add_node(*s, p, i, start);
  const auto target = static_cast<int64_t>(o.fill * static_cast<double>(capacity));
  int64_t next = 0;
  for (int c = 0; c < kRunChunks && s->running_gpus < target; ++c) {
    const EventTime at = start + Minutes(5) * (c + 1);
    s->model.advance(at);
    const int64_t want = std::max<int64_t>(1, (target - s->running_gpus) / (kRunChunks - c));
    std::vector<std::string> keys;
    for (int64_t asked = 0; asked < want;) {
      const Spec sp = make_spec(o, next++, false);
      asked += sp.total_gpus();
      keys.push_back(key_of(sp));
      submit(*s, sp, at);
    }
    for (const auto& d : s->engine->schedule(at_ms(at))) run(*s, d, at);
    for (const auto& key : keys)
      if (s->specs.erase(key) > 0) s->engine->remove_workload(key, at_ms(at));
  }
  const EventTime queued = kT0 - Minutes(4);
  for (const auto& sp : pending) {
    const EventTime at = queued + std::chrono::milliseconds(240'000 * sp.index / o.pending);
    s->model.advance(at);
    submit(*s, sp, at);
  }
  s->model.advance(kT0);
  for (const auto& d : s->engine->schedule(at_ms(kT0))) run(*s, d, kT0);  // the holes filled
  return s;
}

}  // namespace gpuaas::bench::scale
