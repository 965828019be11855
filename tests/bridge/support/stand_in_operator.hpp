// A stand-in for the operators of a cluster (Kubeflow's training operator, the Job controller,
// KubeRay, the Deployment controller), for end-to-end tests: it makes each running workload's
// pods from its templates and deletes them when the workload is suspended, through the fake API
// server's store, so watchers see the ADDED and DELETED events a real operator causes.
//
// Kinds: kubeflow.org/v1 PyTorchJob (spec.pytorchReplicaSpecs.<Type>.{replicas,template}, held by
// spec.runPolicy.suspend), batch/v1 Job (spec.template, min(parallelism, completions) pods, held
// by spec.suspend), ray.io/v1 RayCluster (spec.headGroupSpec.template and
// spec.workerGroupSpecs[].{replicas,minReplicas,maxReplicas,numOfHosts,suspend,template}, held by
// spec.suspend) and apps/v1 Deployment (spec.replicas, spec.template; no suspend). Kinds the store
// has not registered are skipped.
//
// Pods are `<workload>-<pod set>-<i>` with the plugins' pod set names (PyTorchJob: the replica
// type in lower case; Job and Deployment: "main"; RayCluster: "head" and each groupName). Each
// gets the template's labels, annotations and spec as they are (scheduling gates, nodeSelector,
// affinity, tolerations), the operator's own labels on top (ray.io/cluster, job-name, ...), an
// ownerReference to the workload (controller: true, its uid) and status.phase Pending. A pod of
// the workload that is missing is made again, as operators do; one it no longer wants is deleted;
// a pod whose controlling workload is gone is deleted, as the garbage collector does. Each pass
// acts on every state a workload went through since the last one (the store's history), as an
// operator's informer delivers each change: a workload suspended and resumed between two passes
// loses its pods and gets new ones. Not modelled: pods finishing, restart policies, KubeRay's
// injected containers, ReplicaSets (a Deployment owns its pods directly here), rollouts.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fake_api_store.hpp"

namespace gpuaas::bridge {

class StandInOperator {
 public:
  // The store must outlive the operator and have v1 Pod registered.
  explicit StandInOperator(FakeStore& store);

  struct Pass {
    std::vector<std::string> created, deleted;  // "namespace/name" of pods
  };
  // One pass over every workload and pod in the store (locks store.mutex, notifies
  // store.changed after). No threads of its own: a test calls it in its poll loop.
  Pass sync();

  // A pod ("namespace/name") not made until released, as from an operator slow to make it.
  void hold_back(const std::string& pod);
  void release(const std::string& pod);

 private:
  FakeStore& store_;
  std::uint64_t seen_rv_ = 0;  // the store's resourceVersion after the last pass
  std::set<std::string> held_back_;
};

}  // namespace gpuaas::bridge
