// Field lists of the model's value types for snapshots (gpuaas/base/archive.hpp). Private to
// gpuaas_core: a snapshot is read back only by the same build.
#pragma once

#include "gpuaas/base/archive.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/core/metric_store.hpp"
#include "gpuaas/core/workload_interpreter.hpp"

namespace gpuaas::core {

template <typename A>
void archive_fields(A& a, OwnerRef& o) {
  a(o.api_version, o.kind, o.name, o.uid);
}
template <typename A>
void archive_fields(A& a, ObjectMeta& m) {
  a(m.api_version, m.kind, m.namespace_, m.name, m.uid, m.resource_version, m.labels, m.annotations,
    m.controller, m.deleting);
}
template <typename A>
void archive_fields(A& a, Taint& t) {
  a(t.key, t.value, t.effect);
}
template <typename A>
void archive_fields(A& a, NodeStatus& n) {
  a(n.capacity, n.allocatable, n.ready, n.unschedulable, n.taints);
}
template <typename A>
void archive_fields(A& a, PodStatus& p) {
  a(p.node_name, p.phase, p.requests, p.gated);
}
template <typename A>
void archive_fields(A& a, KubeObject& o) {
  a(o.meta, o.node, o.pod, o.json);
}
template <typename A>
void archive_fields(A& a, WorkloadView& v) {
  a(v.plugin, v.demand, v.lifecycle, v.error);
}
template <typename A>
void archive_fields(A& a, SeriesSample& s) {
  a(s.name, s.labels, s.value, s.time, s.previous);
}

}  // namespace gpuaas::core
