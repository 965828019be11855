// The Kubernetes kinds the core reads besides the workload kinds plugins claim: whatever
// carries them to gpuaasd (gpuaas-bridge's default `resources`, its ClusterRole) must watch each
// of these, or a decision that depends on one silently has nothing to read.
// tests/deploy/consumed_kinds_test.cpp compares this list with both.
#pragma once

namespace gpuaas::core {

struct ConsumedKind {
  const char* api_version;
  const char* kind;
  const char* plural;
  bool namespaced;
  const char* read_for;  // which decision reads it
};

inline constexpr ConsumedKind kConsumedKinds[] = {
    {"v1", "Node", "nodes", false, "capacity, taints and readiness (admission, placement, scale)"},
    {"v1", "Pod", "pods", true, "requests on nodes, pod workloads, attribution of samples"},
    {"v1", "Namespace", "namespaces", false, "labels that ClusterQueue namespaceSelectors match"},
    {"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", true,
     "scale-in: a drain a budget forbids waits"},
    {"scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", false,
     "a Pod's priorityClassName gives its priority when no WorkloadPriorityClass is named"},
};

}  // namespace gpuaas::core
