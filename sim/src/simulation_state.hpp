// The simulator's own state during a run (private to simulation*.cpp): the agenda of what
// happens when, the workloads as the users and operators see them, and the running sums.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/sim/cluster.hpp"
#include "gpuaas/sim/daemon_driver.hpp"
#include "gpuaas/sim/kind_model.hpp"
#include "gpuaas/sim/run_result.hpp"
#include "gpuaas/sim/simulation.hpp"
#include "kpa.hpp"
#include "serving_queue.hpp"
#include "vllm_metrics.hpp"

namespace gpuaas::sim {

// kAtZero: admitted, with no GPU pods: a service the knative baseline scaled to zero, or a
// workload gpuaas scaled to zero (SimWorkload::reclaimed; a RayCluster keeps its head).
enum class WorkloadState {
  kUnsubmitted,
  kQueued,
  kStarting,
  kBusy,
  kIdle,
  kAtZero,
  kDone,
  kDeleted
};

struct SimWorkload {
  WorkloadInstance instance;
  const WorkloadTemplate* spec = nullptr;
  const KindModel* kind = nullptr;
  std::string key;  // namespace/name
  nlohmann::json object;
  uint64_t resource_version = 0;
  WorkloadState state = WorkloadState::kUnsubmitted;
  uint64_t epoch = 0;  // bumped when it stops; stale agenda entries check it
  Time submitted{};
  std::optional<Time> started;  // first time every pod ran (queue wait ends)
  Time run_started{};           // this run's start (after a preemption: the restart)
  std::optional<Time> done;     // the work was done (the outcome's time)
  int64_t preemptions = 0;
  std::optional<Time> deadline;
  std::vector<uint64_t> pods;                                  // pod ids in the cluster
  std::map<std::string, std::map<std::string, int64_t>> hint;  // pod set -> node -> pods left
  bool outcome = false;
  int64_t gpu_milli_bound = 0;  // GPUs its bound pods hold
  // Requests without the latency model: when the service last stopped serving (to count the
  // wait), and since when it serves.
  std::optional<Time> unserved_since;
  std::optional<Time> serving_since;
  // The latency model (simulation_requests.cpp): its requests' queue and ready replicas' slots,
  // the next arrival to queue, the requests started whose answer is still coming or ended within
  // the stable window (arrival, end; ms since the start), each ready replica's vLLM series by pod.
  ServingQueue queue;
  std::size_t next_arrival = 0;
  std::vector<std::pair<double, double>> recent;
  std::map<uint64_t, VllmMetrics> vllm;
  double busy_until_ms = -1;  // its last request answered (or, without the model, served)
  // KServe's autoscaler (simulation_autoscale.cpp): the predictor replicas Knative asks for, its
  // decider, and since when it has wanted none (the scale-to-zero grace).
  int32_t replicas = 0;
  Kpa kpa;
  std::optional<Time> zero_wanted_since;
  std::optional<Time> at_zero_since;  // scaled to zero; until its pods run again
  bool waking = false;
  // At zero: by gpuaas's SCALE_TO_ZERO (else by the knative baseline), the GPUs its pods held,
  // whether gpuaasd still holds its quota (gpuaas: from explain), and whether the sums count it.
  bool reclaimed = false;
  int64_t zero_gpu_milli = 0;
  bool quota_held = false;
  bool zero_counted = false;
  uint64_t zero_token = 0;  // bumped on entering zero; stale agenda entries check it
  // gpuaas's, at zero or waking: no pod takes its requests, the ingress (activator) reports them.
  bool activator = false;
};

inline void add_metric_labels(v1::MetricSample& s,
                              std::initializer_list<std::pair<const char*, std::string>> labels) {
  for (const auto& [k, v] : labels) {
    auto* l = s.add_labels();
    l->set_name(k);
    l->set_value(v);
  }
}

struct Agenda {
  struct Item {
    Time at;
    uint64_t seq;
    std::function<void()> f;
    bool operator>(const Item& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<>> items;
  uint64_t seq = 0;
  void at(Time t, std::function<void()> f) { items.push({t, seq++, std::move(f)}); }
};

class Simulation {
 public:
  Simulation(const Scenario& scenario, const SimOptions& options);
  Result<RunResult> run();

 private:
  // simulation.cpp: the loop, nodes, pools, the autoscaler, actions.
  Status setup();
  Status settle();
  void apply(const v1::Action& a);
  void record_decision(const v1::Action& a);
  void advance(Time t);  // running sums up to t
  void add_node(const NodePoolSpec& pool, bool at_start);
  // Labels of a pool's node: its flavor's nodeLabels, gpuaas.io/flavor, node-pool, hostname.
  std::map<std::string, std::string> node_labels(const NodePoolSpec& pool, const std::string& name);
  void node_ready(const std::string& name);
  // To `target` nodes (within minNodes..maxNodes); `remove` names nodes to remove first.
  void scale_pool(const std::string& pool, int32_t target, const std::string& why,
                  const std::vector<std::string>& remove = {});
  void autoscale();  // cluster-autoscaler, for the kueue-like baseline
  void publish_node(const SimNode& n, Change c);
  void publish_metrics();
  void sample_series();
  // simulation_workloads.cpp: users and operators.
  void submit(std::size_t w);
  void reconcile(std::size_t w);
  void bind_pending();
  void pod_running(uint64_t pod, std::size_t w, uint64_t epoch);
  void all_pods_running(std::size_t w);
  void busy_done(std::size_t w, uint64_t epoch);
  void remove_workload(std::size_t w);
  // Stops its pods but those `keep` still asks for (per pod set); returns the GPUs it stopped.
  int64_t stop_pods(std::size_t w, const std::vector<PodShape>& keep = {});
  // Creates the pods `want` asks for beyond those it has (per pod set); returns how many.
  int64_t create_pods(std::size_t w, const std::vector<PodShape>& want);
  void publish_workload(std::size_t w, Change c);
  void publish_pod(uint64_t pod, Change c);
  // simulation_requests.cpp: requests, and the latency model's queue.
  // Without the latency model: requests that waited since unserved_since, served from `now`
  // (serving_now) or never, and those served since serving_since.
  void count_requests(std::size_t w, Time now, bool serving_now);
  void count_served(std::size_t w, Time now);
  static bool latency_model(const SimWorkload& w);
  double now_ms() const;
  void run_requests(std::size_t w, double until_ms);
  void started(std::size_t w, const ServingQueue::Started& s);
  void open_replica(std::size_t w, uint64_t pod);
  void close_replica(std::size_t w, uint64_t pod);
  void drop_waiting(std::size_t w);
  void finish_requests(std::size_t w);
  double concurrency(const SimWorkload& w, Millis window) const;
  double arrival_rate(const SimWorkload& w, Millis window) const;
  bool active_within(const SimWorkload& w, Millis window) const;
  // simulation_autoscale.cpp: KServe's autoscaler (Knative's KPA) and the replicas it runs.
  static bool autoscaled(const SimWorkload& w);
  int32_t bounded_replicas(const SimWorkload& w, int32_t n) const;
  void set_replicas(std::size_t w, int32_t n);
  std::vector<PodShape> wanted_pods(std::size_t w);
  void resize(std::size_t w);
  void stop_replica(std::size_t w, uint64_t pod);
  void kpa_tick();
  void kpa_step(std::size_t w);
  // simulation_serving.cpp: a workload at zero (Knative's, or gpuaas's reclaim) and its wake.
  void enter_zero(std::size_t w, bool by_gpuaas);
  void leave_zero(std::size_t w);
  void hold_quota(SimWorkload& w, bool held);
  void next_request_at_zero(std::size_t w);
  void begin_wake(std::size_t w, Time from);
  void wake(std::size_t w);
  void woke(std::size_t w);
  // simulation_reclaim.cpp: gpuaas's own scale to zero and back, through gpuaasd's actions.
  bool follow_reclaim(std::size_t w);  // true: the reclaim handled the object's change
  void scaled_back(std::size_t w);
  void add_request_count(v1::MetricBatch& batch, std::size_t w);
  void publish_request_count(std::size_t w);
  void refresh_quota_held();
  double gpu_util(const SimWorkload& w);
  int64_t requests_between(const SimWorkload& w, Time from, Time to) const;
  std::pair<std::size_t, std::size_t> arrivals_between(const std::vector<int64_t>& a, Time from,
                                                       Time to) const;
  static bool serves_requests(const SimWorkload& w);
  void finish_accounts();
  void record(const SimWorkload& w);  // its WorkloadRecord, at the end of the run
  Millis startup_delay(const SimWorkload& w, const SimPod& p);

  const Scenario& scenario_;
  SimOptions options_;
  RunResult result_;
  std::unique_ptr<DaemonDriver> driver_;
  Cluster cluster_;
  Agenda agenda_;
  Time now_{};
  Time last_{};  // running sums are counted up to here
  Time end_{};
  std::vector<SimWorkload> workloads_;
  std::map<std::string, std::size_t> by_key_;  // namespace/name -> workload
  std::map<std::string, const NodePoolSpec*> pools_;
  std::map<std::string, std::string> node_pool_flavor_;  // gpuaas NodePool name -> flavor
  std::map<std::string, int32_t> pool_next_;             // node name counter per pool
  std::map<std::string, std::map<std::string, std::string>> flavor_labels_;
  std::map<std::string, Time> node_empty_since_;  // the autoscaler's scale-down clock

  std::map<uint64_t, uint64_t> pod_rv_;
  uint64_t node_rv_ = 0;
  int64_t busy_gpu_milli_ = 0;
  int64_t zero_gpu_milli_ = 0;   // GPUs of workloads at zero
  int64_t held_zero_milli_ = 0;  // those of them whose quota is still held
  std::map<std::string, int64_t> tenant_held_milli_;
  std::set<std::size_t> reclaimed_at_zero_;  // gpuaas's, whose quota explain tells
  std::set<std::size_t> activated_;          // those with SimWorkload::activator
  std::map<std::size_t, Time> wake_started_;
  std::map<std::string, int64_t> tenant_alloc_milli_, tenant_busy_milli_;
  std::vector<std::size_t> serving_;  // workloads that serve requests (per-service figures)
  bool autoscaler_ = false;
  uint64_t quota_read_at_ = ~uint64_t{0};  // events published when explain was last read
};

}  // namespace gpuaas::sim
