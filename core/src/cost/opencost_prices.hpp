// Prices from OpenCost, as its /metrics publishes them and the metrics path brings them (the
// bridge scrapes OpenCost like any target): per node, node_gpu_hourly_cost, node_gpu_count and
// node_total_hourly_cost. Their meaning has changed between OpenCost versions: before 2024,
// node_gpu_hourly_cost could be the node's whole GPU cost, since then it is one GPU's; a value
// that, times the node's GPUs, exceeds the node's whole hourly cost can only be the former and
// is divided by the GPUs. A zero or a missing price is reported, never used; without a GPU
// price, the node's total hourly cost over its GPUs is used (it includes CPU and memory: an
// upper bound, said so in its basis). A flavor's price is the median of its nodes'. Private to
// gpuaas_core.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gpuaas/core/metric_store.hpp"

namespace gpuaas::core::cost {

struct Price;

class OpenCostPrices {
 public:
  struct NodePrice {
    std::string flavor;
    double gpu_hour = 0;
    std::string basis;  // which series, and how they were read
  };
  struct Refusal {
    std::string node;
    std::string reason;
  };
  // Reads the latest samples. `flavor_of` names a node's flavor ("" unknown), `gpus_of` its GPU
  // capacity in the model (0 unknown).
  void refresh(const MetricStore& store,
               const std::function<std::string(const std::string&)>& flavor_of,
               const std::function<double(const std::string&)>& gpus_of);

  const std::map<std::string, NodePrice>& nodes() const { return nodes_; }
  const std::vector<Refusal>& refused() const { return refused_; }
  // Per flavor: the median of its nodes' GPU-hour prices (source "OpenCost").
  std::map<std::string, Price> by_flavor() const;

 private:
  std::map<std::string, NodePrice> nodes_;
  std::vector<Refusal> refused_;
};

}  // namespace gpuaas::core::cost
