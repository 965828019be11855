#include "gpuaas/sim/placement_experiment.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpuaas/admission/node_index.hpp"

namespace gpuaas::sim {
namespace {

using core::admission::Amount;
using core::admission::Amounts;

// Memory in milli-bytes, as gpuaas counts every Kubernetes quantity.
constexpr int64_t kMiBMilli = int64_t{1024} * 1024 * 1000;
constexpr int64_t kDeviceMilli = 1000;

// An index in [0, n) from the generator, without modulo bias: outputs in the final incomplete
// block of n values (2^64 mod n of them) are redrawn. Spelled out so that a seed gives the same
// pods on every standard library, which std::uniform_int_distribution does not promise.
uint64_t draw_index(std::mt19937_64& rng, uint64_t n) {
  const uint64_t incomplete = (uint64_t{0} - n) % n;  // 2^64 mod n
  const uint64_t last = std::numeric_limits<uint64_t>::max() - incomplete;
  for (;;) {
    const uint64_t x = rng();
    if (x <= last) return x % n;
  }
}

// The baseline: nodes in trace order, the first node where the pod fits, on it the first device
// with room for a share of a GPU or the first wholly free devices for whole GPUs.
class FirstFit {
 public:
  void add(const AlibabaNode& n) {
    nodes_.push_back({n.cpu_milli, n.memory_mib * kMiBMilli,
                      std::vector<int64_t>(static_cast<std::size_t>(n.gpus), kDeviceMilli)});
  }
  bool place(int64_t cpu, int64_t mem, int64_t gpu) {
    for (Node& n : nodes_) {
      if (n.cpu < cpu || n.mem < mem) continue;
      picked_.clear();
      if (gpu > 0 && gpu < kDeviceMilli) {
        auto it = std::find_if(n.dev.begin(), n.dev.end(), [&](int64_t f) { return f >= gpu; });
        if (it == n.dev.end()) continue;
        picked_.push_back(static_cast<std::size_t>(it - n.dev.begin()));
      } else {
        const auto whole = static_cast<std::size_t>(gpu / kDeviceMilli);
        for (std::size_t d = 0; d < n.dev.size() && picked_.size() < whole; ++d)
          if (n.dev[d] == kDeviceMilli) picked_.push_back(d);
        if (picked_.size() < whole) continue;
      }
      n.cpu -= cpu;
      n.mem -= mem;
      for (const std::size_t d : picked_) n.dev[d] -= std::min(gpu, kDeviceMilli);
      return true;
    }
    return false;
  }

 private:
  struct Node {
    int64_t cpu = 0, mem = 0;
    std::vector<int64_t> dev;  // free milli per device
  };
  std::vector<Node> nodes_;
  std::vector<std::size_t> picked_;
};

Status check_inputs(const std::vector<AlibabaPod>& pods, const std::vector<AlibabaNode>& nodes,
                    const PlacementOptions& o) {
  if (pods.empty()) return Status::invalid("placement experiment: no pods");
  if (nodes.empty()) return Status::invalid("placement experiment: no nodes");
  if (!std::isfinite(o.load) || o.load <= 0.0) {
    return Status::invalid("placement experiment: load " + std::to_string(o.load) +
                           " is not a positive number");
  }
  if (o.candidates < 1) {
    return Status::invalid("placement experiment: candidates " + std::to_string(o.candidates) +
                           " is below 1");
  }
  // Arrivals stop on GPUs asked: without any, they never would.
  if (std::none_of(pods.begin(), pods.end(),
                   [](const AlibabaPod& p) { return p.gpu_request_milli() > 0; })) {
    return Status::invalid("placement experiment: no pod asks for GPUs");
  }
  // Memory becomes milli-bytes and GPUs milli-GPUs: refuse what would overflow 64 bits.
  constexpr int64_t kMaxMiB = std::numeric_limits<int64_t>::max() / kMiBMilli / 64;
  constexpr int64_t kMaxGpus = int64_t{1} << 30;
  for (const AlibabaPod& p : pods) {
    if (p.memory_mib > kMaxMiB || p.num_gpu > kMaxGpus) {
      return Status::invalid("placement experiment: pod " + p.name + " asks for too much");
    }
  }
  std::unordered_set<std::string> names;
  int64_t gpus = 0;
  for (const AlibabaNode& n : nodes) {
    if (!names.insert(n.sn).second) {
      return Status::invalid("placement experiment: node " + n.sn + " appears twice");
    }
    if (n.memory_mib > kMaxMiB || n.gpus > kMaxGpus) {
      return Status::invalid("placement experiment: node " + n.sn + " is too large");
    }
    gpus += n.gpus;
  }
  if (gpus == 0) return Status::invalid("placement experiment: the nodes have no GPUs");
  return Status::ok();
}

}  // namespace

Result<PlacementResult> run_placement_experiment(const std::vector<AlibabaPod>& pods,
                                                 const std::vector<AlibabaNode>& nodes,
                                                 const PlacementOptions& options) {
  if (Status s = check_inputs(pods, nodes, options); !s.is_ok()) return s;
  const auto start = std::chrono::steady_clock::now();

  core::admission::NameIndex names;
  core::admission::NodeIndex index(names);
  const int gpu = names.intern("nvidia.com/gpu");
  const int cpu = names.intern("cpu");
  const int mem = names.intern("memory");
  auto amounts = [&](int64_t g, int64_t c, int64_t m) {
    Amounts a;
    if (g != 0) a.push_back({gpu, g});
    if (c != 0) a.push_back({cpu, c});
    if (m != 0) a.push_back({mem, m});
    std::sort(a.begin(), a.end(),
              [](const Amount& x, const Amount& y) { return x.resource < y.resource; });
    return a;
  };
  policy::ResourceFlavor flavor;  // no node labels: every node is in it
  flavor.name = "openb";
  index.set_flavors({&flavor});
  FirstFit first_fit;
  for (const AlibabaNode& n : nodes) {
    core::admission::NodeInfo info;
    info.name = n.sn;
    info.labels = {{"gpuaas.io/gpu-model", n.model}};
    info.allocatable = amounts(n.gpus * kDeviceMilli, n.cpu_milli, n.memory_mib * kMiBMilli);
    info.ready = true;
    index.upsert(info);
    first_fit.add(n);
  }

  // Each trace pod as a gang of one, built once: a draw picks one of these.
  std::vector<std::vector<core::admission::PodGroup>> gangs(
      pods.size(), std::vector<core::admission::PodGroup>(1));
  for (std::size_t i = 0; i < pods.size(); ++i) {
    gangs[i][0].count = 1;
    gangs[i][0].per_pod =
        amounts(pods[i].gpu_request_milli(), pods[i].cpu_milli, pods[i].memory_mib * kMiBMilli);
  }

  PlacementResult r;
  r.seed = options.seed;
  r.load = options.load;
  r.candidates = options.candidates;
  r.gpu_capacity_milli = index.allocatable(0, gpu);
  // The line arrivals stop at, rounded to a milli-GPU so that 1.3 x 6212 GPUs is exactly 8075.6.
  const auto target =
      static_cast<int64_t>(std::llround(options.load * static_cast<double>(r.gpu_capacity_milli)));
  std::mt19937_64 rng(options.seed);
  while (r.gpus_requested_milli < target) {
    const auto i = static_cast<std::size_t>(draw_index(rng, pods.size()));
    const AlibabaPod& pod = pods[i];
    const int64_t g = pod.gpu_request_milli();
    ++r.pods_arrived;
    r.gpus_requested_milli += g;
    if (auto placement = index.fit(0, gangs[i], options.candidates)) {
      index.commit(*placement, gangs[i], +1);
      ++r.pods_placed;
      r.gpus_allocated_milli += g;
    } else {
      ++r.pods_failed;
    }
    if (first_fit.place(pod.cpu_milli, pod.memory_mib * kMiBMilli, g)) {
      ++r.first_fit_pods_placed;
      r.first_fit_gpus_allocated_milli += g;
    }
  }
  // What the index says is taken must be what the placed pods asked for.
  const int64_t taken = r.gpu_capacity_milli - index.free(0, gpu);
  if (taken != r.gpus_allocated_milli) {
    return Status::internal("placement experiment: NodeIndex holds " + std::to_string(taken) +
                            " GPU milli, the placed pods asked for " +
                            std::to_string(r.gpus_allocated_milli));
  }
  const auto capacity = static_cast<double>(r.gpu_capacity_milli);
  r.gpu_allocation_rate = static_cast<double>(r.gpus_allocated_milli) / capacity;
  r.first_fit_allocation_rate = static_cast<double>(r.first_fit_gpus_allocated_milli) / capacity;
  r.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

Result<PlacementSeeds> run_placement_seeds(const std::vector<AlibabaPod>& pods,
                                           const std::vector<AlibabaNode>& nodes,
                                           const PlacementOptions& options, uint64_t first_seed,
                                           uint64_t last_seed) {
  if (last_seed < first_seed) {
    return Status::invalid("placement experiment: seeds " + std::to_string(first_seed) + ".." +
                           std::to_string(last_seed) + " are empty");
  }
  PlacementSeeds out;
  out.load = options.load;
  out.candidates = options.candidates;
  double sum = 0.0, sum_first_fit = 0.0;
  for (uint64_t seed = first_seed;; ++seed) {
    PlacementOptions o = options;
    o.seed = seed;
    auto r = run_placement_experiment(pods, nodes, o);
    if (!r) return r.status();
    sum += r->gpu_allocation_rate;
    sum_first_fit += r->first_fit_allocation_rate;
    out.gpu_allocation_rate_min =
        out.per_seed.empty() ? r->gpu_allocation_rate
                             : std::min(out.gpu_allocation_rate_min, r->gpu_allocation_rate);
    out.gpu_allocation_rate_max = std::max(out.gpu_allocation_rate_max, r->gpu_allocation_rate);
    out.per_seed.push_back(std::move(*r));
    if (seed == last_seed) break;  // not `seed <= last_seed`: last_seed may be the largest value
  }
  const auto n = static_cast<double>(out.per_seed.size());
  out.gpu_allocation_rate = sum / n;
  out.first_fit_allocation_rate = sum_first_fit / n;
  return out;
}

const std::vector<PublishedRate>& published_placement_rates() {
  // Weng et al., ATC '23, openb_pod_list_default at 130% load, mean of 10 seeds (42-51 in their
  // artifact's experiments/run_scripts/generate_run_scripts.py); see ../shared/traces/README.md.
  static const std::vector<PublishedRate> kRates = {
      {"Random", 0.8747},     {"DotProd", 0.9085}, {"GpuClustering", 0.9188},
      {"GpuPacking", 0.9200}, {"BestFit", 0.9308}, {"FGD", 0.9539},
  };
  return kRates;
}

std::string placement_report_json(const PlacementSeeds& seeds) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["mode"] = "placement";
  j["load"] = seeds.load;
  j["candidates"] = seeds.candidates;
  j["seeds"] = ordered_json::array();
  for (const PlacementResult& r : seeds.per_seed) j["seeds"].push_back(r.seed);
  j["gpu_allocation_rate"] = seeds.gpu_allocation_rate;
  j["gpu_allocation_rate_min"] = seeds.gpu_allocation_rate_min;
  j["gpu_allocation_rate_max"] = seeds.gpu_allocation_rate_max;
  j["first_fit_allocation_rate"] = seeds.first_fit_allocation_rate;
  j["per_seed"] = ordered_json::array();
  for (const PlacementResult& r : seeds.per_seed) {
    j["per_seed"].push_back({
        {"seed", r.seed},
        {"gpu_allocation_rate", r.gpu_allocation_rate},
        {"first_fit_allocation_rate", r.first_fit_allocation_rate},
        {"pods_arrived", r.pods_arrived},
        {"pods_placed", r.pods_placed},
        {"pods_failed", r.pods_failed},
        {"gpus_requested", static_cast<double>(r.gpus_requested_milli) / 1000.0},
        {"gpus_allocated", static_cast<double>(r.gpus_allocated_milli) / 1000.0},
    });
  }
  ordered_json published = ordered_json::object();
  for (const PublishedRate& p : published_placement_rates())
    published[p.policy] = p.gpu_allocation_rate;
  j["published"] = std::move(published);  // the paper's, not measured here
  j["published_source"] =
      "Weng et al., ATC '23, 130% load, mean of seeds 42-51 (../shared/traces/README.md)";
  return j.dump();
}

std::string placement_report_table(const PlacementSeeds& seeds) {
  struct Row {
    std::string name;
    double rate;
    std::string note;
  };
  auto pct = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * v);
    return std::string(buf);
  };
  std::vector<Row> rows;
  for (const PublishedRate& p : published_placement_rates())
    rows.push_back(
        {p.policy, p.gpu_allocation_rate, "published, at 130% load (Weng et al., ATC '23)"});
  const std::size_t n = seeds.per_seed.size();
  const std::string over = std::to_string(n) + (n == 1 ? " seed" : " seeds");
  rows.push_back({"gpuaas", seeds.gpu_allocation_rate,
                  "measured, " + pct(seeds.gpu_allocation_rate_min) + " - " +
                      pct(seeds.gpu_allocation_rate_max) + " over " + over + "  <== gpuaas"});
  rows.push_back({"first fit", seeds.first_fit_allocation_rate, "measured baseline"});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.rate > b.rate; });

  std::string seed_range;
  if (n > 0) {
    seed_range = std::to_string(seeds.per_seed.front().seed);
    if (n > 1) seed_range += "-" + std::to_string(seeds.per_seed.back().seed);
  }
  char head[160];
  std::snprintf(head, sizeof head,
                "GPU allocation rate at %.0f%% load, seed%s %s, %d candidates per pod\n",
                100.0 * seeds.load, n == 1 ? "" : "s", seed_range.c_str(), seeds.candidates);
  std::string out = head;
  for (const Row& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %8s  %s\n", r.name.c_str(), pct(r.rate).c_str(),
                  r.note.c_str());
    out += line;
  }
  return out;
}

}  // namespace gpuaas::sim
