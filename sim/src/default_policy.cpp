#include "gpuaas/sim/default_policy.hpp"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::sim {

namespace {
// Knative's timings (stable window 60 s, grace 30 s) until a service's gaps are learned, no
// minimum run time and no cooldown, so that gpuaas and the knative baseline differ only in when
// each service goes to zero: learnArrivals picks each service's idle timeout from its request
// gaps, at coldStartCost GPU-seconds per cold start.
constexpr const char* kIdleReclaim =
    "---\napiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\n"
    "metadata: {name: serving-idle}\nspec:\n  selector: {kinds: [InferenceService]}\n"
    "  idle: {window: 60s, requests: true, learnArrivals: true, coldStartCost: 20s}\n"
    "  action: ScaleToZero\n  gracePeriod: 30s\n  minRuntime: 0s\n  cooldown: 0s\n";
}  // namespace

std::vector<PolicyText> default_policy(const Scenario& s) {
  std::map<std::string, int64_t> gpus_by_flavor;  // at the pools' largest size
  for (const auto& p : s.node_pools)
    gpus_by_flavor[p.flavor] += int64_t{p.gpus_per_node} * std::max(p.max_nodes, p.nodes);
  std::set<std::string> namespaces, priorities;
  std::set<std::pair<std::string, std::string>> queues;
  for (const auto& w : s.workloads) {
    namespaces.insert(w.namespace_);
    queues.insert({w.namespace_, w.queue});
    if (!w.priority_class.empty()) priorities.insert(w.priority_class);
  }
  const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(namespaces.size()));
  std::ostringstream y;
  for (const auto& [f, gpus] : gpus_by_flavor) {
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: " << f
      << "}\nspec:\n  nodeLabels: {" << kFlavorLabel << ": " << f << "}\n";
  }
  for (const auto& ns : namespaces) {
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: " << ns
      << "}\nspec:\n  cohort: all\n  namespaceSelector:\n    matchLabels: "
         "{kubernetes.io/metadata.name: "
      << ns
      << "}\n  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n"
         "  resourceGroups:\n    - coveredResources: [cpu, memory, nvidia.com/gpu]\n"
         "      flavors:\n";
    for (const auto& [f, gpus] : gpus_by_flavor) {
      // Equal shares, rounded up so that the shares cover every GPU.
      y << "        - name: " << f << "\n          resources:\n"
        << "            - {name: cpu, nominalQuota: 100000}\n"
        << "            - {name: memory, nominalQuota: 100000Gi}\n"
        << "            - {name: nvidia.com/gpu, nominalQuota: " << (gpus + n - 1) / n << "}\n";
    }
  }
  for (const auto& [ns, q] : queues) {
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: " << q
      << ", namespace: " << ns << "}\nspec: {clusterQueue: " << ns << "}\n";
  }
  for (const auto& p : priorities) {
    const int value = p == "high" ? 1000 : p == "low" ? 10 : 100;
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: "
      << p << "}\nvalue: " << value << "\n";
  }
  y << "---\napiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata: {name: default}\n"
       "spec: {fairSharing: {enable: true}}\n";
  if (s.gpuaas_scale_to_zero) return {{"built-in default policy", y.str() + kIdleReclaim}};
  return {{"built-in default policy", y.str()}};
}

}  // namespace gpuaas::sim
