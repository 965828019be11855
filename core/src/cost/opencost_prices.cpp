#include "opencost_prices.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "gpu_accounting.hpp"

namespace gpuaas::core::cost {
namespace {

constexpr const char* kGpuCost = "node_gpu_hourly_cost";
constexpr const char* kGpuCount = "node_gpu_count";
constexpr const char* kTotalCost = "node_total_hourly_cost";

std::string node_of(const SeriesSample& s) {
  std::string n(MetricStore::label(s, "node"));
  return n.empty() ? std::string(MetricStore::label(s, "instance")) : n;
}

std::map<std::string, double> per_node(const MetricStore& store, const char* name) {
  std::map<std::string, double> out;
  for (const SeriesSample* s : store.named(name)) {
    const std::string node = node_of(*s);
    if (!node.empty() && std::isfinite(s->value)) out[node] = s->value;
  }
  return out;
}

std::string money(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void OpenCostPrices::refresh(const MetricStore& store,
                             const std::function<std::string(const std::string&)>& flavor_of,
                             const std::function<double(const std::string&)>& gpus_of) {
  nodes_.clear();
  refused_.clear();
  const auto gpu = per_node(store, kGpuCost);
  const auto count = per_node(store, kGpuCount);
  const auto total = per_node(store, kTotalCost);
  std::set<std::string> names;
  for (const auto* m : {&gpu, &count, &total})
    for (const auto& [n, v] : *m) names.insert(n);
  for (const auto& node : names) {
    auto get = [&](const std::map<std::string, double>& m) {
      auto it = m.find(node);
      return it == m.end() ? -1.0 : it->second;
    };
    const double g = get(gpu), t = get(total);
    double n = get(count);
    if (n <= 0) n = gpus_of(node);
    if (n <= 0) continue;  // not a GPU node
    NodePrice p;
    p.flavor = flavor_of(node);
    if (g > 0) {
      if (t > 0 && n > 1 && g * n > t * 1.01) {
        p.gpu_hour = g / n;
        p.basis = kGpuCost + std::string(" / ") + kGpuCount + " (the node's whole GPU cost, as " +
                  "OpenCost before 2024 wrote it)";
      } else {
        p.gpu_hour = g;
        p.basis = kGpuCost;
      }
    } else {
      if (g == 0) refused_.push_back({node, std::string(kGpuCost) + " is 0"});
      if (g < 0) refused_.push_back({node, std::string("no ") + kGpuCost});
      if (t > 0) {
        p.gpu_hour = t / n;
        p.basis = std::string(kTotalCost) + " over its " + money(n) +
                  " GPUs (CPU and memory included: an upper bound)";
      } else {
        refused_.push_back(
            {node, t == 0 ? std::string(kTotalCost) + " is 0" : std::string("no ") + kTotalCost});
        continue;
      }
    }
    if (!std::isfinite(p.gpu_hour) || p.gpu_hour <= 0) continue;
    nodes_[node] = std::move(p);
  }
}

std::map<std::string, Price> OpenCostPrices::by_flavor() const {
  std::map<std::string, std::vector<double>> prices;
  for (const auto& [node, p] : nodes_)
    if (!p.flavor.empty()) prices[p.flavor].push_back(p.gpu_hour);
  std::map<std::string, Price> out;
  for (auto& [flavor, v] : prices) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    const double median = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
    out[flavor] = {median, "OpenCost"};
  }
  return out;
}

}  // namespace gpuaas::core::cost
