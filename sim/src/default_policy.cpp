#include "gpuaas/sim/default_policy.hpp"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "gpuaas/capacity/erlang_c.hpp"
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

// The serving replay's objective for gpuaasd: its services' time to first token at p95 and, with
// `scaling`, the rate one replica sustains there, so that gpuaasd sets KServe's autoscaler
// bounds and rps target (headroom, lead time and interval are gpuaasd's defaults, written out).
// The services of a replay are alike: the first with a latency model speaks for all, over all
// their requests.
std::string service_objective(const Scenario& s, bool scaling) {
  const WorkloadTemplate* first = nullptr;
  std::vector<RequestTokens> requests;
  for (const auto& w : s.workloads) {
    if (w.kind != "InferenceService" || !w.serving) continue;
    if (first == nullptr) first = &w;
    if (w.request_tokens)
      requests.insert(requests.end(), w.request_tokens->begin(), w.request_tokens->end());
  }
  if (first == nullptr) return "";
  std::ostringstream y;
  y << "---\napiVersion: gpuaas.io/v1alpha1\nkind: ServiceObjective\nmetadata: {name: serving}\n"
       "spec:\n  selector: {kinds: [InferenceService]}\n  latency: {ttftP95: "
    << first->latency_objective.count() << "ms}\n";
  const double rps = sustainable_rps_per_replica(*first, requests);
  if (scaling && rps > 0) {
    y.setf(std::ios::fixed);
    y.precision(3);
    y << "  scaling:\n    perReplicaRps: " << rps
      << "\n    headroom: 0.2\n    leadTime: 60s\n    interval: 30s\n";
  }
  return y.str();
}

// gpuaasd refuses a whole policy set over a field it does not know: `scaling` goes in only when
// its policy reader takes it.
std::string checked_service_objective(const Scenario& s) {
  const std::string with = service_objective(s, true);
  if (with.empty() || policy::parse_policy_texts({{"service objective", with}}).ok()) return with;
  return service_objective(s, false);
}
}  // namespace

double sustainable_rps_per_replica(const WorkloadTemplate& w,
                                   const std::vector<RequestTokens>& requests) {
  if (!w.serving) return 0;
  const ServingSpeed& speed = *w.serving;
  double context = speed.context_tokens, generated = speed.generated_tokens;
  if (!requests.empty()) {
    double c = 0, g = 0;
    for (const auto& r : requests) {
      c += r.context;
      g += r.generated;
    }
    context = c / static_cast<double>(requests.size());
    generated = g / static_cast<double>(requests.size());
  }
  const double prefill = context / speed.prefill_tokens_per_second;
  const double hold = prefill + generated / speed.output_tokens_per_second;
  const double wait = std::chrono::duration<double>(w.latency_objective).count() - prefill;
  if (hold <= 0 || wait < 0) return 0;
  return capacity::sustainable_rate(speed.slots, 1.0 / hold, wait, 0.05);
}

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
  if (s.gpuaas_scale_to_zero)
    return {{"built-in default policy", y.str() + kIdleReclaim + checked_service_objective(s)}};
  return {{"built-in default policy", y.str()}};
}

}  // namespace gpuaas::sim
