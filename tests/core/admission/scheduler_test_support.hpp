// Helpers for the scheduler's tests: a policy from YAML text (through the real loader, so the
// tests read like the files a platform team writes), nodes per flavor, workloads with GPU, cpu
// and memory per pod, and event times. Nothing here sleeps: time is what the test says it is.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::core::admission::test {

using namespace std::chrono_literals;

constexpr int64_t kGiB = int64_t{1024} * 1024 * 1024 * 1000;  // memory in milli-bytes
constexpr int64_t gpus(int64_t n) { return n * 1000; }        // whole GPUs in milli

// An arbitrary fixed epoch: decisions depend on differences only.
inline const Time t0{std::chrono::milliseconds{1'700'000'000'000}};

// The node label a flavor selects its nodes by.
inline constexpr const char* kFlavorLabel = "gpuaas.test/flavor";

inline std::string flavor_yaml(const std::string& name) {
  return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: " + name +
         "\nspec:\n  nodeLabels:\n    " + kFlavorLabel + ": " + name + "\n---\n";
}

inline std::string local_queue_yaml(const std::string& ns, const std::string& name,
                                    const std::string& cq) {
  return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: " + name +
         "\n  namespace: " + ns + "\nspec:\n  clusterQueue: " + cq + "\n---\n";
}

inline std::string priority_class_yaml(const std::string& name, int32_t value) {
  return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: " +
         name + "\nvalue: " + std::to_string(value) + "\n---\n";
}

// GPU quota of one flavor in a ClusterQueue or Cohort; cpu and memory get ample quota beside it
// so that GPUs are what the tests are about.
struct GpuQuota {
  std::string flavor;
  int64_t nominal = 0;  // whole GPUs
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

inline std::string resource_groups_yaml(const std::vector<GpuQuota>& quotas) {
  std::string y =
      "  resourceGroups:\n  - coveredResources: [\"cpu\", \"memory\", \"nvidia.com/gpu\"]\n"
      "    flavors:\n";
  for (const auto& q : quotas) {
    y += "    - name: " + q.flavor + "\n      resources:\n";
    y += "      - {name: cpu, nominalQuota: 1000}\n";
    y += "      - {name: memory, nominalQuota: 10000Gi}\n";
    y += "      - name: nvidia.com/gpu\n        nominalQuota: " + std::to_string(q.nominal) + "\n";
    if (q.borrowing_limit)
      y += "        borrowingLimit: " + std::to_string(*q.borrowing_limit) + "\n";
    if (q.lending_limit) y += "        lendingLimit: " + std::to_string(*q.lending_limit) + "\n";
  }
  return y;
}

// A ClusterQueue open to every namespace; `extra` is more of its spec, indented by two spaces.
inline std::string cluster_queue_yaml(const std::string& name, const std::string& cohort,
                                      const std::vector<GpuQuota>& quotas,
                                      const std::string& extra = "") {
  std::string y =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: " + name +
      "\nspec:\n  namespaceSelector: {}\n";
  if (!cohort.empty()) y += "  cohort: " + cohort + "\n";
  y += resource_groups_yaml(quotas);
  return y + extra + "---\n";
}

inline std::string cohort_yaml(const std::string& name, const std::string& parent,
                               const std::vector<GpuQuota>& quotas) {
  std::string y =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: " + name + "\nspec:\n";
  if (!parent.empty()) y += "  parentName: " + parent + "\n";
  if (!quotas.empty()) y += resource_groups_yaml(quotas);
  return y + "---\n";
}

// `spec` is the AdmissionPolicy's spec, indented by two spaces.
inline std::string admission_policy_yaml(const std::string& spec) {
  return "apiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata:\n  name: policy\n"
         "spec:\n" +
         spec + "---\n";
}

// Loads through the real loader; a test's policy that does not load is the test's own bug.
inline std::shared_ptr<const policy::PolicySet> load_policy(const std::string& yaml) {
  auto r = policy::parse_policy_texts({{"policy.yaml", yaml}});
  if (!r.ok()) {
    std::string all;
    for (const auto& d : r.errors) all += d.str() + "\n";
    throw std::runtime_error("test policy does not load:\n" + all + yaml);
  }
  return std::make_shared<const policy::PolicySet>(std::move(r.set));
}

inline std::string job_key(const std::string& ns, const std::string& name) {
  return "batch/Job/" + ns + "/" + name;
}

// A workload of `pods` alike pods; designated initializers name only what a test cares about.
struct Job {
  std::string name;
  int64_t gpu = gpus(1);  // per pod, milli
  int64_t pods = 1;
  std::string priority;  // WorkloadPriorityClass name; empty: priority 0
  Time created = t0;
  std::string ns = "team-a";
  std::string queue = "main";
  int64_t min_pods = 0;  // partial admission down to this
  std::optional<Time> deadline;
  std::optional<Seconds> duration;
  policy::LabelMap selector;
  int64_t cpu = 1000;
  int64_t memory = kGiB;
};

inline Amounts amounts(Scheduler& s, int64_t gpu, int64_t cpu, int64_t memory) {
  Amounts a;
  if (gpu > 0) a.push_back({s.resources().intern("nvidia.com/gpu"), gpu});
  if (cpu > 0) a.push_back({s.resources().intern("cpu"), cpu});
  if (memory > 0) a.push_back({s.resources().intern("memory"), memory});
  std::sort(a.begin(), a.end(),
            [](const Amount& x, const Amount& y) { return x.resource < y.resource; });
  return a;
}

inline WorkloadInfo workload(Scheduler& s, const Job& j) {
  WorkloadInfo w;
  w.key = job_key(j.ns, j.name);
  w.kind = "batch/Job";
  w.namespace_ = j.ns;
  w.name = j.name;
  w.local_queue = j.queue;
  w.priority_class = j.priority;
  w.created = j.created;
  w.deadline = j.deadline;
  w.expected_duration = j.duration;
  PodSetRequest ps;
  ps.name = "main";
  ps.count = j.pods;
  ps.min_count = j.min_pods;
  ps.per_pod = amounts(s, j.gpu, j.cpu, j.memory);
  ps.node_selector = j.selector;
  w.pod_sets.push_back(std::move(ps));
  return w;
}

inline NodeInfo node(Scheduler& s, const std::string& name, const std::string& flavor,
                     int64_t gpu_count, bool ready = true) {
  NodeInfo n;
  n.name = name;
  n.labels = {{kFlavorLabel, flavor}, {"kubernetes.io/hostname", name}};
  n.allocatable = amounts(s, gpus(gpu_count), 128 * 1000, 2048 * kGiB);
  n.ready = ready;
  return n;
}

// Adds `count` nodes named <flavor>-<i> with `gpu_count` GPUs each.
inline void add_nodes(Scheduler& s, const std::string& flavor, int count, int64_t gpu_count,
                      Time now = t0) {
  for (int i = 0; i < count; ++i)
    s.upsert_node(node(s, flavor + "-" + std::to_string(i), flavor, gpu_count), now);
}

inline void submit(Scheduler& s, const Job& j, Time now = t0) {
  s.upsert_workload(workload(s, j), now);
}

// The object reports an end state (succeeded or failed) or, for a victim, that it stopped.
inline void observe(Scheduler& s, const Job& j, ObservedState state, Time now) {
  WorkloadInfo w = workload(s, j);
  w.observed = state;
  s.upsert_workload(std::move(w), now);
}
inline void finish(Scheduler& s, const Job& j, Time now) {
  observe(s, j, ObservedState::kFinished, now);
}
inline void stopped(Scheduler& s, const Job& j, Time now) {
  observe(s, j, ObservedState::kWaiting, now);
}

// Workload keys of the decisions of one kind, in decision order.
inline std::vector<std::string> keys(const std::vector<Decision>& ds, Decision::Kind kind) {
  std::vector<std::string> out;
  for (const auto& d : ds)
    if (d.kind == kind) out.push_back(d.workload);
  return out;
}
inline std::vector<std::string> admitted(const std::vector<Decision>& ds) {
  return keys(ds, Decision::Kind::kAdmit);
}
inline std::vector<std::string> preempted(const std::vector<Decision>& ds) {
  return keys(ds, Decision::Kind::kPreempt);
}
inline const Decision* find(const std::vector<Decision>& ds, const std::string& key,
                            Decision::Kind kind = Decision::Kind::kAdmit) {
  for (const auto& d : ds)
    if (d.kind == kind && d.workload == key) return &d;
  return nullptr;
}

// Keys of jobs in namespace `ns`, for comparing with admitted() and preempted().
inline std::vector<std::string> keys_of(std::initializer_list<const char*> names,
                                        const std::string& ns = "team-a") {
  std::vector<std::string> out;
  for (const char* n : names) out.push_back(job_key(ns, n));
  return out;
}

// Pods per node of a decision's first pod set.
inline std::vector<std::pair<std::string, int64_t>> placed(const Decision& d) {
  if (d.placement.groups.empty()) return {};
  auto nodes = d.placement.groups.front().nodes;
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

}  // namespace gpuaas::core::admission::test
