// Field lists of the admission engine's public value types for base::ArchiveWriter/Reader (see
// gpuaas/base/archive.hpp), so that a snapshot of anything holding a WorkloadInfo, a NodeInfo or a
// Placement writes them one way. Policy types inside them (taints, tolerations) are written field
// by field here rather than given archive_fields of their own in the policy namespace, which the
// admission engine does not own.
#pragma once

#include <cstddef>
#include <vector>

#include "gpuaas/admission/node_index.hpp"
#include "gpuaas/admission/resources.hpp"
#include "gpuaas/admission/workload.hpp"
#include "gpuaas/base/archive.hpp"

namespace gpuaas::core::admission {

namespace snapshot_detail {

// A vector whose elements are written by `each(a, element)`.
template <typename A, typename T, typename F>
void archive_each(A& a, std::vector<T>& v, F&& each) {
  if constexpr (A::kLoading) {
    v.clear();
    const std::size_t n = a.count();
    for (std::size_t i = 0; i < n && a.ok(); ++i) {
      T x{};
      each(a, x);
      v.push_back(std::move(x));
    }
  } else {
    a.count(v.size());
    for (auto& x : v) each(a, x);
  }
}

template <typename A>
void archive_taints(A& a, std::vector<policy::Taint>& v) {
  archive_each(a, v, [](A& ar, policy::Taint& t) { ar(t.key, t.value, t.effect); });
}

template <typename A>
void archive_tolerations(A& a, std::vector<policy::Toleration>& v) {
  archive_each(a, v, [](A& ar, policy::Toleration& t) {
    ar(t.key, t.operator_, t.value, t.effect, t.toleration_seconds);
  });
}

}  // namespace snapshot_detail

template <typename A>
void archive_fields(A& a, Amount& x) {
  a(x.resource, x.milli);
}

template <typename A>
void archive_fields(A& a, FlavorResourceAmount& x) {
  a(x.fr, x.milli);
}

template <typename A>
void archive_fields(A& a, PodSetRequest& p) {
  a(p.name, p.count, p.min_count, p.per_pod, p.node_selector);
  snapshot_detail::archive_tolerations(a, p.tolerations);
}

template <typename A>
void archive_fields(A& a, WorkloadInfo& w) {
  a(w.key, w.kind, w.namespace_, w.name, w.local_queue, w.priority_class, w.created, w.deadline,
    w.expected_duration, w.pod_sets, w.observed);
}

template <typename A>
void archive_fields(A& a, NodeInfo& n) {
  a(n.name, n.labels);
  snapshot_detail::archive_taints(a, n.taints);
  a(n.allocatable, n.ready, n.schedulable, n.used_by_others);
}

template <typename A>
void archive_fields(A& a, PodGroup& g) {
  a(g.count, g.per_pod, g.node_selector);
  snapshot_detail::archive_tolerations(a, g.tolerations);
}

template <typename A>
void archive_fields(A& a, DeviceShare& d) {
  a(d.node, d.device, d.milli);
}

template <typename A>
void archive_fields(A& a, PodGroupPlacement& p) {
  a(p.nodes, p.devices);
}

template <typename A>
void archive_fields(A& a, Placement& p) {
  a(p.flavor, p.groups);
}

template <typename A>
void archive_fields(A& a, PlacementStats& s) {
  a(s.attempts, s.candidates_scored, s.stranding_scored);
}

}  // namespace gpuaas::core::admission
