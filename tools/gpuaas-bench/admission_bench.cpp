#include "admission_bench.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"

namespace gpuaas::bench {
namespace {

namespace adm = gpuaas::core::admission;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

constexpr int64_t kMilli = 1000;
constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kNodeCpu = 96;
constexpr int64_t kNodeMemory = 1024 * kGi;  // 1Ti
constexpr const char* kFlavor = "h100";
constexpr const char* kGpuLabel = "nvidia.com/gpu.product";
constexpr const char* kGpuProduct = "NVIDIA-H100-80GB-HBM3";
const adm::Time kT0{Ms(1'800'000'000'000)};  // any fixed event time: runs stay comparable

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int64_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Nearest-rank percentile of a sorted sample.
double pct(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string padded(const char* prefix, int64_t i, int width) {
  std::string n = std::to_string(i);
  return prefix + std::string(static_cast<std::size_t>(std::max(0, width - int(n.size()))), '0') +
         n;
}

std::string cq_name(int q) { return padded("cq-", q, 4); }
std::string ns_name(int q) { return padded("team-", q, 4); }

// One GPU flavor; per cohort an equal share of the cluster's GPUs, split unevenly among its
// ClusterQueues (weights 0.5-1.5) while demand is skewed independently, so that queues with
// little demand lend to those with much (borrowing happens). cpu and memory quotas follow the
// node's per-GPU ratio.
std::shared_ptr<policy::PolicySet> make_policy(const AdmissionBenchOptions& o, std::mt19937_64& rng,
                                               int64_t* nominal_gpus) {
  auto set = std::make_shared<policy::PolicySet>();
  policy::ResourceFlavor flavor;
  flavor.name = kFlavor;
  flavor.node_labels = {{kGpuLabel, kGpuProduct}};
  set->flavors.push_back(flavor);
  for (const auto& [name, value] :
       {std::pair{"low", 100}, std::pair{"normal", 1000}, std::pair{"high", 10000}}) {
    policy::WorkloadPriorityClass pc;
    pc.name = name;
    pc.value = value;
    set->priority_classes.push_back(pc);
  }
  const auto gpus = static_cast<int64_t>(
      std::llround(static_cast<double>(o.nodes * o.gpus_per_node) * o.quota_ratio));
  *nominal_gpus = 0;
  std::uniform_real_distribution<double> weight(0.5, 1.5);
  for (int c = 0; c < o.cohorts; ++c) {
    policy::Cohort cohort;
    cohort.name = padded("cohort-", c, 3);
    cohort.implicit = true;  // named by its ClusterQueues only, as most clusters write it
    set->cohorts.push_back(cohort);
    const int first = static_cast<int>(int64_t{c} * o.queues / o.cohorts);
    const int last = static_cast<int>(int64_t{c + 1} * o.queues / o.cohorts);
    const int64_t share = gpus * (c + 1) / o.cohorts - gpus * c / o.cohorts;
    std::vector<double> w;
    for (int q = first; q < last; ++q) w.push_back(weight(rng));
    double sum = 0;
    for (double x : w) sum += x;
    int64_t given = 0;
    for (int q = first; q < last; ++q) {
      const bool last_one = q + 1 == last;
      const int64_t g = last_one
                            ? share - given
                            : static_cast<int64_t>(static_cast<double>(share) *
                                                   w[static_cast<std::size_t>(q - first)] / sum);
      given += g;
      policy::ClusterQueue cq;
      cq.name = cq_name(q);
      cq.cohort = cohort.name;
      cq.namespace_selector.present = true;  // {}: every namespace
      policy::FlavorQuotas fq;
      fq.flavor = kFlavor;
      auto quota = [](const char* r, int64_t milli) {
        policy::ResourceQuota rq;
        rq.name = r;
        rq.nominal_milli = milli;
        return rq;
      };
      fq.resources = {quota("cpu", g * kNodeCpu * kMilli / o.gpus_per_node),
                      quota("memory", g * (kNodeMemory / o.gpus_per_node) * kMilli),
                      quota("nvidia.com/gpu", g * kMilli)};
      cq.resource_groups.push_back({{"cpu", "memory", "nvidia.com/gpu"}, {fq}});
      if (o.preemption) {
        cq.preemption.within_cluster_queue = policy::WithinClusterQueue::kLowerPriority;
        cq.preemption.reclaim_within_cohort = policy::ReclaimWithinCohort::kAny;
      }
      set->cluster_queues.push_back(cq);
      policy::LocalQueue lq;
      lq.namespace_ = ns_name(q);
      lq.name = "default";
      lq.cluster_queue = cq.name;
      set->local_queues.push_back(lq);
    }
    *nominal_gpus += share;
  }
  set->admission.fair_sharing = o.fair_sharing;
  return set;
}

adm::Amounts amounts(int cpu, int64_t cpu_milli, int memory, int64_t memory_milli, int gpu,
                     int64_t gpu_milli) {
  adm::Amounts a{{cpu, cpu_milli}, {memory, memory_milli}, {gpu, gpu_milli}};
  std::sort(a.begin(), a.end(),
            [](const adm::Amount& x, const adm::Amount& y) { return x.resource < y.resource; });
  return a;
}

// Workload i, the same in every run with the same seed: each has its own RNG, so a workload can
// be rebuilt from its index (to finish or requeue it) without keeping it.
struct Generator {
  const AdmissionBenchOptions& o;
  std::vector<double> queue_cdf;  // demand per queue, cumulative, skewed (weights 0.2-1.8)
  int cpu = 0, memory = 0, gpu = 0;

  struct Shape {
    int64_t pods = 1;
    int64_t gpus = 1;  // per pod
  };

  // A GPU cluster's mix: mostly 1 GPU, some 2, 4 and 8, a few gangs of whole nodes.
  Shape shape(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const int64_t node = o.gpus_per_node;
    Shape s;
    if (u < 0.58) {
      s = {1, 1};
    } else if (u < 0.73) {
      s = {1, 2};
    } else if (u < 0.85) {
      s = {1, 4};
    } else if (u < 0.95) {
      s = {1, 8};
    } else if (u < 0.99) {
      s = {std::uniform_int_distribution<int64_t>(2, 4)(rng), node};
    } else {
      s = {std::uniform_int_distribution<int64_t>(8, 16)(rng), node};
    }
    s.gpus = std::min(s.gpus, node);
    return s;
  }

  adm::WorkloadInfo make(int64_t i, adm::Time created) const {
    std::mt19937_64 rng(splitmix(o.seed * 0x100000001b3ULL + static_cast<uint64_t>(i)));
    std::uniform_real_distribution<double> unit(0, 1);
    const auto q = static_cast<int>(
        std::upper_bound(queue_cdf.begin(), queue_cdf.end(), unit(rng) * queue_cdf.back()) -
        queue_cdf.begin());
    const int queue = std::min(q, o.queues - 1);
    const Shape s = shape(rng);
    // cpu and memory in proportion to the GPUs, below the node's per-GPU share.
    const double per_gpu_cpu = static_cast<double>(kNodeCpu) / o.gpus_per_node;
    const double per_gpu_mem = static_cast<double>(kNodeMemory / kGi) / o.gpus_per_node;
    const auto cpus = std::max<int64_t>(
        1, std::llround(static_cast<double>(s.gpus) * per_gpu_cpu * (0.5 + 0.4 * unit(rng))));
    const auto mem_gi = std::max<int64_t>(
        1, std::llround(static_cast<double>(s.gpus) * per_gpu_mem * (0.5 + 0.4 * unit(rng))));
    const double p = unit(rng);
    // Expected run time: log-normal around 2h, 5 min to 7 days.
    const double dur = std::clamp(
        std::exp(std::log(7200.0) + std::normal_distribution<>(0, 1)(rng)), 300.0, 7 * 86400.0);
    const bool deadline = unit(rng) < o.deadline_share;
    const double slack = 1.5 + 4.5 * unit(rng);

    adm::WorkloadInfo w;
    w.kind = s.pods > 1 ? "kubeflow.org/PyTorchJob" : "batch/Job";
    w.namespace_ = ns_name(queue);
    w.name = "wl-" + std::to_string(i);
    w.key = w.kind + "/" + w.namespace_ + "/" + w.name;
    w.local_queue = "default";
    w.priority_class = p < 0.15 ? "low" : p < 0.85 ? "normal" : "high";
    w.created = created;
    w.expected_duration = adm::Seconds(static_cast<int64_t>(dur));
    if (deadline) w.deadline = created + adm::Seconds(static_cast<int64_t>(dur * slack));
    adm::PodSetRequest ps;
    ps.name = s.pods > 1 ? "worker" : "main";
    ps.count = s.pods;
    ps.per_pod = amounts(cpu, cpus * kMilli, memory, mem_gi * kGi * kMilli, gpu, s.gpus * kMilli);
    w.pod_sets.push_back(std::move(ps));
    return w;
  }

  int64_t gpus(int64_t i) const {
    const auto w = make(i, kT0);
    for (const auto& a : w.pod_sets[0].per_pod)
      if (a.resource == gpu) return w.pod_sets[0].count * a.milli / kMilli;
    return 0;
  }
};

int64_t index_of(const std::string& key) { return std::stoll(key.substr(key.rfind('-') + 1)); }

adm::NodeInfo make_node(int64_t i, const AdmissionBenchOptions& o, const Generator& g) {
  adm::NodeInfo n;
  n.name = padded("gpu-node-", i, 6);
  n.labels = {{kGpuLabel, kGpuProduct}, {"kubernetes.io/hostname", n.name}};
  n.allocatable = amounts(g.cpu, kNodeCpu * kMilli, g.memory, kNodeMemory * kMilli, g.gpu,
                          int64_t{o.gpus_per_node} * kMilli);
  n.ready = true;
  return n;
}

// Which workloads are admitted (by index), to pick one to finish at random in O(1).
struct AdmittedSet {
  std::vector<int64_t> list;
  std::vector<int64_t> pos;  // by workload index; -1: not admitted
  void add(int64_t i) {
    if (static_cast<std::size_t>(i) >= pos.size()) pos.resize(static_cast<std::size_t>(i) + 1, -1);
    pos[static_cast<std::size_t>(i)] = static_cast<int64_t>(list.size());
    list.push_back(i);
  }
  void erase(int64_t i) {
    const int64_t at = pos[static_cast<std::size_t>(i)];
    if (at < 0) return;
    list[static_cast<std::size_t>(at)] = list.back();
    pos[static_cast<std::size_t>(list.back())] = at;
    list.pop_back();
    pos[static_cast<std::size_t>(i)] = -1;
  }
};

// What the daemon does with decisions: admitted ones run; preempted ones stop and, next event,
// come back as waiting.
struct Outcome {
  int64_t admissions = 0;
  int64_t preemptions = 0;
  int64_t borrowing = 0;  // admissions above the ClusterQueue's nominal quota
};
Outcome apply(const std::vector<adm::Decision>& ds, AdmittedSet& admitted,
              std::vector<int64_t>& evicted) {
  Outcome r;
  for (const auto& d : ds) {
    const int64_t i = index_of(d.workload);
    if (d.kind == adm::Decision::Kind::kAdmit) {
      admitted.add(i);
      ++r.admissions;
      if (d.borrowing) ++r.borrowing;
    } else {
      admitted.erase(i);
      evicted.push_back(i);
      ++r.preemptions;
    }
  }
  return r;
}

}  // namespace

int run_admission_bench(const AdmissionBenchOptions& o) {
  if (o.workloads <= 0 || o.queues <= 0 || o.cohorts <= 0 || o.cohorts > o.queues || o.nodes <= 0 ||
      o.gpus_per_node <= 0) {
    std::cerr << "admission: need workloads, queues, nodes, gpus-per-node > 0 and "
                 "0 < cohorts <= queues\n";
    return 2;
  }
  const int64_t steady = o.steady >= 0 ? o.steady : std::min<int64_t>(o.workloads, 20000);
  std::mt19937_64 rng(o.seed);
  int64_t nominal_gpus = 0;
  auto policy = make_policy(o, rng, &nominal_gpus);
  Generator gen{o, {}};
  std::uniform_real_distribution<double> demand(0.2, 1.8);
  double acc = 0;
  for (int q = 0; q < o.queues; ++q) gen.queue_cdf.push_back(acc += demand(rng));
  std::vector<int64_t> created(static_cast<std::size_t>(o.workloads + steady), 0);
  AdmittedSet admitted;
  admitted.pos.assign(created.size(), -1);
  std::vector<adm::WorkloadInfo> batch;
  batch.reserve(4096);
  const int64_t rss_start = rss_bytes();

  adm::Scheduler sched(policy);
  gen.cpu = sched.resources().intern("cpu");
  gen.memory = sched.resources().intern("memory");
  gen.gpu = sched.resources().intern("nvidia.com/gpu");

  std::cerr << "admission: " << o.nodes << " nodes, " << o.queues << " ClusterQueues in "
            << o.cohorts << " cohorts, " << o.workloads << " workloads\n";
  auto t = Clock::now();
  for (int64_t i = 0; i < o.nodes; ++i) sched.upsert_node(make_node(i, o, gen), kT0);
  const double node_seconds = seconds(Clock::now() - t);
  // Before any admission: node totals alone (memory in milli-bytes sums large).
  std::string why_nodes;
  const bool invariants_ok_nodes = sched.check_invariants(&why_nodes);
  const int64_t rss_nodes = rss_bytes();

  // Phase 1: everything submitted, then one pass. Workloads are built in batches outside the
  // timed part, so only the engine is measured.
  double submit_seconds = 0;
  for (int64_t i = 0; i < o.workloads;) {
    batch.clear();
    for (; i < o.workloads && batch.size() < 4096; ++i) {
      created[static_cast<std::size_t>(i)] = i;
      batch.push_back(gen.make(i, kT0 + Ms(i)));
    }
    t = Clock::now();
    for (auto& w : batch) {
      const adm::Time at = w.created;
      sched.upsert_workload(std::move(w), at);
    }
    submit_seconds += seconds(Clock::now() - t);
  }
  batch = {};
  adm::Time now = kT0 + Ms(o.workloads);
  std::cerr << "admission: submitted in " << submit_seconds << " s; initial pass...\n";
  std::vector<int64_t> evicted;
  t = Clock::now();
  auto decisions = sched.schedule(now);
  const double initial_seconds = seconds(Clock::now() - t);
  const Outcome initial = apply(decisions, admitted, evicted);
  const uint64_t initial_attempts = sched.stats().attempts;
  sched.take_status_changes();
  const int64_t rss_initial = rss_bytes();
  const std::size_t sched_bytes = sched.bytes();
  const int64_t pending_initial = sched.stats().pending;
  std::cerr << "admission: initial pass admitted " << initial.admissions << " in "
            << initial_seconds << " s, " << pending_initial << " pending; " << steady
            << " steady-state iterations...\n";

  // Phase 2: one workload ends, one arrives (and last pass's victims come back), one pass.
  std::vector<double> with_admission_us, pass_us, all_us;
  all_us.reserve(static_cast<std::size_t>(steady));
  double steady_seconds = 0, status_seconds = 0;
  int64_t steady_admissions = 0, steady_preemptions = 0, steady_borrowing = 0, status_changes = 0;
  const uint64_t attempts_before = sched.stats().attempts;
  const uint64_t settled_before = sched.stats().settled;
  const double cpu_before = cpu_seconds();
  int64_t next = o.workloads;
  auto progress = Clock::now();
  for (int64_t it = 0; it < steady; ++it) {
    now += Ms(o.step_ms);
    std::vector<adm::WorkloadInfo> events;
    if (!admitted.list.empty()) {
      const int64_t fin = admitted.list[rng() % admitted.list.size()];
      admitted.erase(fin);
      events.push_back(gen.make(fin, kT0 + Ms(created[static_cast<std::size_t>(fin)])));
      events.back().observed = adm::ObservedState::kFinished;
    }
    created[static_cast<std::size_t>(next)] = (now - kT0).count();
    events.push_back(gen.make(next++, now));
    for (int64_t v : evicted) {
      events.push_back(gen.make(v, kT0 + Ms(created[static_cast<std::size_t>(v)])));
      events.back().observed = adm::ObservedState::kWaiting;
    }
    evicted.clear();

    const auto t0 = Clock::now();
    for (auto& w : events) sched.upsert_workload(std::move(w), now);
    const auto t1 = Clock::now();
    decisions = sched.schedule(now);
    const auto t2 = Clock::now();
    status_changes += static_cast<int64_t>(sched.take_status_changes().size());
    status_seconds += seconds(Clock::now() - t2);

    const Outcome r = apply(decisions, admitted, evicted);
    steady_admissions += r.admissions;
    steady_preemptions += r.preemptions;
    steady_borrowing += r.borrowing;
    const double us = seconds(t2 - t0) * 1e6;
    steady_seconds += seconds(t2 - t0);
    all_us.push_back(us);
    if (r.admissions > 0) {
      with_admission_us.push_back(us);
      pass_us.push_back(seconds(t2 - t1) * 1e6);
    }
    if (seconds(Clock::now() - progress) > 5) {
      progress = Clock::now();
      std::cerr << "admission: " << it + 1 << "/" << steady << " iterations, " << steady_admissions
                << " admissions\n";
    }
  }
  const uint64_t steady_attempts = sched.stats().attempts - attempts_before;
  // Of the attempts, those a bound settled without a flavor assignment or victim search.
  const uint64_t steady_settled = sched.stats().settled - settled_before;
  // All of phase 2 (bookkeeping too): far below steady_seconds means the machine was busy.
  const double steady_cpu = cpu_seconds() - cpu_before;
  for (auto* v : {&with_admission_us, &pass_us, &all_us}) std::sort(v->begin(), v->end());

  // Untimed checks: the engine's own oracle, and how full the cluster is.
  std::string why;
  const bool invariants_ok = sched.check_invariants(&why);
  int64_t gpus_admitted = 0;
  for (int64_t i : admitted.list) gpus_admitted += gen.gpus(i);
  // Why the backlog waits, from explain() on up to 1000 workloads spread over all submitted.
  json waiting = json::object();
  const int64_t stride = std::max<int64_t>(1, next / 1000);
  for (int64_t i = 0; i < next; i += stride) {
    if (admitted.pos[static_cast<std::size_t>(i)] >= 0) continue;
    const auto x = sched.explain(gen.make(i, kT0).key, now);
    if (!x.known || x.state != "Pending") continue;
    const std::string k = x.reason + (x.holder.empty() ? "" : "/" + x.holder);
    waiting[k] = waiting.value(k, 0) + 1;
  }

  const auto per = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const auto n_it = static_cast<double>(std::max<int64_t>(steady, 1));
  json out = {
      {"workloads", o.workloads},
      {"queues", o.queues},
      {"cohorts", o.cohorts},
      {"nodes", o.nodes},
      {"gpus_per_node", o.gpus_per_node},
      {"seed", o.seed},
      {"preemption", o.preemption},
      {"fair_sharing", o.fair_sharing},
      {"deadline_share", o.deadline_share},
      {"cluster_gpus", o.nodes * o.gpus_per_node},
      {"nominal_gpus", nominal_gpus},
      {"node_setup_seconds", node_seconds},
      {"submit_seconds", submit_seconds},
      {"submits_per_second", per(static_cast<double>(o.workloads), submit_seconds)},
      {"admitted_initial", initial.admissions},
      {"preempted_initial", initial.preemptions},
      {"borrowing_initial", initial.borrowing},
      {"initial_pass_seconds", initial_seconds},
      {"initial_admissions_per_second",
       per(static_cast<double>(initial.admissions), initial_seconds)},
      {"initial_attempts", initial_attempts},
      {"pending", pending_initial},
      {"steady_iterations", steady},
      {"steady_decisions", static_cast<int64_t>(with_admission_us.size())},
      {"steady_admissions", steady_admissions},
      {"steady_preemptions", steady_preemptions},
      {"steady_borrowing_admissions", steady_borrowing},
      {"steady_seconds", steady_seconds},
      {"steady_cpu_seconds", steady_cpu},
      {"admissions_per_second", per(static_cast<double>(steady_admissions), steady_seconds)},
      {"p50_decision_us", pct(with_admission_us, 0.50)},
      {"p99_decision_us", pct(with_admission_us, 0.99)},
      {"max_decision_us", with_admission_us.empty() ? 0.0 : with_admission_us.back()},
      {"p50_pass_us", pct(pass_us, 0.50)},
      {"p99_pass_us", pct(pass_us, 0.99)},
      {"p50_iteration_us", pct(all_us, 0.50)},
      {"p99_iteration_us", pct(all_us, 0.99)},
      {"attempts_per_iteration", static_cast<double>(steady_attempts) / n_it},
      {"settled_per_admission",
       per(static_cast<double>(steady_settled), static_cast<double>(steady_admissions))},
      {"attempts_per_admission",
       per(static_cast<double>(steady_attempts), static_cast<double>(steady_admissions))},
      {"status_changes_per_iteration", static_cast<double>(status_changes) / n_it},
      {"status_take_us_per_iteration", status_seconds * 1e6 / n_it},
      {"pending_end", sched.stats().pending},
      {"admitted_end", sched.stats().admitted},
      {"gpus_admitted_end", gpus_admitted},
      {"scheduler_bytes", sched_bytes},
      {"bytes_per_workload", static_cast<double>(sched_bytes) / static_cast<double>(o.workloads)},
      {"rss_nodes_mb", static_cast<double>(rss_nodes - rss_start) / 1e6},
      {"rss_bytes_per_workload",
       static_cast<double>(rss_initial - rss_nodes) / static_cast<double>(o.workloads)},
      {"rss_mb", static_cast<double>(rss_bytes()) / 1e6},
      {"invariants_ok", invariants_ok},
      {"pending_sample_reasons", waiting},
  };
  if (!invariants_ok) out["invariants_why"] = why;
  out["invariants_ok_nodes_only"] = invariants_ok_nodes;
  if (!invariants_ok_nodes) out["invariants_why_nodes_only"] = why_nodes;
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace gpuaas::bench
