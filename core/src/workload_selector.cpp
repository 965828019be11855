#include "workload_selector.hpp"

#include <algorithm>

namespace gpuaas::core {

bool selector_matches(const policy::WorkloadSelector& sel, const KubeObject& obj,
                      const std::string& cluster_queue) {
  auto in = [](const std::vector<std::string>& list, const std::string& v) {
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
  };
  if (!in(sel.kinds, obj.meta.kind) || !in(sel.namespaces, obj.meta.namespace_)) return false;
  if (!sel.cluster_queues.empty() && !in(sel.cluster_queues, cluster_queue)) return false;
  for (const auto& [k, v] : sel.match_labels) {
    auto it = obj.meta.labels.find(k);
    if (it == obj.meta.labels.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace gpuaas::core
