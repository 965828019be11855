// The cluster the simulator plays: nodes in node pools, pods, and a kube-scheduler that binds
// pending pods to nodes (the node gpuaas chose when its placement hint names one, else the
// default kube-scheduler's choice). GPUs are counted per device, so fractional pods share one.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/sim/kind_model.hpp"
#include "gpuaas/sim/scenario.hpp"

namespace gpuaas::sim {

using Time = std::chrono::sys_time<Millis>;

struct SimNode {
  std::string name;
  std::string pool;
  std::map<std::string, std::string> labels;
  std::vector<int32_t> device_free;  // GPU milli free per device (1000 each when empty)
  int64_t cpu_free = 0, memory_free = 0;
  int64_t cpu = 0, memory = 0;
  bool ready = false;          // registered and Ready (failed provisioning: never)
  bool registered = false;     // the Node object exists
  bool unschedulable = false;  // cordoned (spec.unschedulable)
  int32_t gpus_later = 0;      // GPUs not allocatable yet (gpuReadyDelay)
  Time ready_at{};
  int32_t pods = 0;
  int64_t gpu_total_milli() const { return static_cast<int64_t>(device_free.size()) * 1000; }
  int64_t gpu_free_milli() const;
};

struct SimPod {
  std::string name;
  std::string namespace_;
  std::size_t workload = 0;  // index into the simulation's workloads
  std::string pod_set;
  int64_t gpu_milli = 0, cpu_milli = 0, memory_bytes = 0;
  std::map<std::string, std::string> node_selector;
  std::map<std::string, std::string> labels;         // its operator's (KindModel::pod_labels)
  std::string node;                                  // "" while unbound
  std::vector<std::pair<int32_t, int32_t>> devices;  // (device, milli) taken
  bool running = false;
  Time created{};
  Time running_since{};
};

// Which node the default kube-scheduler prefers (NodeResourcesFit's scoring strategy).
enum class BindStrategy { kLeastAllocated, kMostAllocated };

class Cluster {
 public:
  explicit Cluster(BindStrategy strategy) : strategy_(strategy) {}

  SimNode& add_node(const std::string& name, const NodePoolSpec& pool,
                    const std::map<std::string, std::string>& labels);
  void remove_node(const std::string& name);
  SimNode* node(const std::string& name);
  const std::map<std::string, SimNode>& nodes() const { return nodes_; }

  // A pod joins the pending queue; returns its id.
  uint64_t add_pod(SimPod pod);
  void remove_pod(uint64_t id);  // unbinds it first
  SimPod* pod(uint64_t id);
  const std::map<uint64_t, SimPod>& pods() const { return pods_; }

  // Binds pending pods where they fit, in creation order. `hint(pod)` names nodes gpuaas chose
  // for the pod's pod set (node -> pods left to bind there); empty: no hint. Returns the pods
  // bound.
  template <typename Hint>
  std::vector<uint64_t> bind_pending(Hint&& hint);
  std::size_t pending() const;
  // GPU milli held by bound pods, and in Ready nodes.
  int64_t gpus_allocated_milli() const { return allocated_gpu_; }
  int64_t gpus_capacity_milli() const;

  bool fits(const SimNode& n, const SimPod& p) const;
  void bind(uint64_t id, SimNode& n);

 private:
  double score(const SimNode& n, const SimPod& p) const;

  BindStrategy strategy_;
  std::map<std::string, SimNode> nodes_;
  std::map<uint64_t, SimPod> pods_;
  std::deque<uint64_t> pending_;  // creation order
  uint64_t next_pod_ = 1;
  int64_t allocated_gpu_ = 0;
};

template <typename Hint>
std::vector<uint64_t> Cluster::bind_pending(Hint&& hint) {
  std::vector<uint64_t> bound;
  std::deque<uint64_t> still;
  for (uint64_t id : pending_) {
    auto it = pods_.find(id);
    if (it == pods_.end()) continue;
    SimPod& p = it->second;
    SimNode* best = nullptr;
    for (const std::string& name : hint(p)) {
      SimNode* n = node(name);
      if (n != nullptr && fits(*n, p)) {
        best = n;
        break;
      }
    }
    if (best == nullptr) {
      double best_score = -1;
      for (auto& [name, n] : nodes_) {
        if (!fits(n, p)) continue;
        const double s = score(n, p);
        if (s > best_score) {
          best_score = s;
          best = &n;
        }
      }
    }
    if (best == nullptr) {
      still.push_back(id);
      continue;
    }
    bind(id, *best);
    bound.push_back(id);
  }
  pending_ = std::move(still);
  return bound;
}

}  // namespace gpuaas::sim
