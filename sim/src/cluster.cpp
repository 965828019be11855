#include "gpuaas/sim/cluster.hpp"

#include <algorithm>

namespace gpuaas::sim {

int64_t SimNode::gpu_free_milli() const {
  int64_t f = 0;
  for (int32_t d : device_free) f += d;
  return f;
}

SimNode& Cluster::add_node(const std::string& name, const NodePoolSpec& pool,
                           const std::map<std::string, std::string>& labels) {
  SimNode n;
  n.name = name;
  n.pool = pool.name;
  n.labels = labels;
  n.device_free.assign(static_cast<std::size_t>(pool.gpus_per_node), 1000);
  n.cpu = n.cpu_free = pool.cpu_milli_per_node;
  n.memory = n.memory_free = pool.memory_bytes_per_node;
  return nodes_[name] = std::move(n);
}

void Cluster::remove_node(const std::string& name) { nodes_.erase(name); }

SimNode* Cluster::node(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

uint64_t Cluster::add_pod(SimPod pod) {
  const uint64_t id = next_pod_++;
  pods_.emplace(id, std::move(pod));
  pending_.push_back(id);
  return id;
}

void Cluster::remove_pod(uint64_t id) {
  auto it = pods_.find(id);
  if (it == pods_.end()) return;
  SimPod& p = it->second;
  if (!p.node.empty()) {
    if (SimNode* n = node(p.node)) {
      for (const auto& [d, m] : p.devices) n->device_free[static_cast<std::size_t>(d)] += m;
      n->cpu_free += p.cpu_milli;
      n->memory_free += p.memory_bytes;
      --n->pods;
    }
    allocated_gpu_ -= p.gpu_milli;
  } else {
    pending_.erase(std::remove(pending_.begin(), pending_.end(), id), pending_.end());
  }
  pods_.erase(it);
}

SimPod* Cluster::pod(uint64_t id) {
  auto it = pods_.find(id);
  return it == pods_.end() ? nullptr : &it->second;
}

std::size_t Cluster::pending() const { return pending_.size(); }

int64_t Cluster::gpus_capacity_milli() const {
  int64_t c = 0;
  for (const auto& [name, n] : nodes_)
    if (n.ready) c += n.gpu_total_milli();
  return c;
}

bool Cluster::fits(const SimNode& n, const SimPod& p) const {
  if (!n.ready || n.unschedulable) return false;
  if (n.cpu_free < p.cpu_milli || n.memory_free < p.memory_bytes) return false;
  for (const auto& [k, v] : p.node_selector) {
    auto it = n.labels.find(k);
    if (it == n.labels.end() || it->second != v) return false;
  }
  if (p.gpu_milli <= 0) return true;
  if (p.gpu_milli < 1000) {
    return std::any_of(n.device_free.begin(), n.device_free.end(),
                       [&](int32_t f) { return f >= p.gpu_milli; });
  }
  const auto whole = std::count(n.device_free.begin(), n.device_free.end(), 1000);
  return whole * 1000 >= p.gpu_milli;
}

void Cluster::bind(uint64_t id, SimNode& n) {
  SimPod& p = pods_.at(id);
  p.node = n.name;
  n.cpu_free -= p.cpu_milli;
  n.memory_free -= p.memory_bytes;
  ++n.pods;
  allocated_gpu_ += p.gpu_milli;
  if (p.gpu_milli <= 0) return;
  if (p.gpu_milli < 1000) {  // the fullest device that fits, as the device plugin shares them
    int32_t best = -1;
    for (std::size_t d = 0; d < n.device_free.size(); ++d) {
      const int32_t f = n.device_free[d];
      if (f >= p.gpu_milli && (best < 0 || f < n.device_free[static_cast<std::size_t>(best)]))
        best = static_cast<int32_t>(d);
    }
    n.device_free[static_cast<std::size_t>(best)] -= static_cast<int32_t>(p.gpu_milli);
    p.devices.emplace_back(best, static_cast<int32_t>(p.gpu_milli));
    return;
  }
  int64_t left = p.gpu_milli;
  for (std::size_t d = 0; d < n.device_free.size() && left > 0; ++d) {
    if (n.device_free[d] != 1000) continue;
    n.device_free[d] = 0;
    p.devices.emplace_back(static_cast<int32_t>(d), 1000);
    left -= 1000;
  }
}

// kube-scheduler's NodeResourcesFit: LeastAllocated (its default) spreads pods over the emptiest
// nodes; MostAllocated packs them. Scored on GPUs, then CPU, like a GPU cluster's configuration.
double Cluster::score(const SimNode& n, const SimPod& p) const {
  const double gpu_total = static_cast<double>(std::max<int64_t>(1, n.gpu_total_milli()));
  const double free_after = (static_cast<double>(n.gpu_free_milli() - p.gpu_milli)) / gpu_total +
                            0.01 * static_cast<double>(n.cpu_free - p.cpu_milli) /
                                static_cast<double>(std::max<int64_t>(1, n.cpu));
  return strategy_ == BindStrategy::kLeastAllocated ? free_after : 2.0 - free_after;
}

}  // namespace gpuaas::sim
