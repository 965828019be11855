// A stand-in for kube-scheduler (and the kubelet's first status), for end-to-end tests: it binds
// each pod that waits for a node to one its constraints allow and that has the nvidia.com/gpu it
// asks for free, through the fake API server's store, so watchers see MODIFIED events.
//
// A pod waits when it has no spec.nodeName, no spec.schedulingGates, is not Succeeded or Failed
// and names no other spec.schedulerName. A node fits when it is not cordoned
// (spec.unschedulable), its labels match the pod's spec.nodeSelector and the required node
// affinity (nodeSelectorTerms ORed, a term's matchExpressions and matchFields ANDed; In, NotIn,
// Exists, DoesNotExist, Gt, Lt; an empty term matches nothing), the pod tolerates its NoSchedule
// and NoExecute taints, and its free nvidia.com/gpu (status.allocatable, else status.capacity,
// minus what bound, unfinished pods request) covers the pod's request (the sum over containers of
// requests, else limits, or the largest init container's if more). Pods go in order of
// spec.priority (higher first), then namespace and name; each to the first fitting node by name.
//
// Binding is a merge patch of spec.nodeName, then a status patch: phase Running and condition
// PodScheduled True. A pod that fits nowhere gets PodScheduled False, reason Unschedulable and a
// message like kube-scheduler's ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1
// node(s) didn't match Pod's node affinity/selector."), written only when it changed. Gated pods
// are left alone. Not modelled: cpu/memory, pod (anti-)affinity, topology spread, preemption,
// preferred affinity, node readiness.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fake_api_store.hpp"

namespace gpuaas::bridge {

class StandInScheduler {
 public:
  // The store must outlive the scheduler and have v1 Pod and v1 Node registered.
  explicit StandInScheduler(FakeStore& store);

  struct Binding {
    std::string ns, name, node;
  };
  struct Pass {
    std::vector<Binding> bound;
    std::vector<std::string> unschedulable;  // "namespace/name" of waiting pods that fit nowhere
  };
  // One pass over the pods in the store (locks store.mutex, notifies store.changed after). No
  // threads of its own: a test calls it in its poll loop. Not itself thread-safe.
  Pass sync();

  // The node this scheduler bound the pod to, "" if none.
  std::string node_of(const std::string& ns, const std::string& name) const;
  // Every binding so far: "namespace/name" -> node.
  const std::map<std::string, std::string>& placements() const { return placements_; }

 private:
  FakeStore& store_;
  std::map<std::string, std::string> placements_;
};

}  // namespace gpuaas::bridge
