// Objects the binding tests feed gpuaasd (pod_binding_test.cpp, views/explain_view_test.cpp):
// a policy with one ClusterQueue on an H100 flavor, nodes whose hostname labels differ from
// their names, plain Pods, PyTorchJobs and the pods an operator makes from their templates.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuaas::core::binding_objects {

using nlohmann::json;

inline std::string policy() {
  return R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 256}
      - {name: memory, nominalQuota: 4Ti}
      - {name: nvidia.com/gpu, nominalQuota: 64}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: research}
spec: {clusterQueue: team-a}
)";
}

// Node names differ from their hostname labels, so a test sees which one the patch names.
inline json node(const std::string& name, int gpus) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"nvidia.com/gpu.product", "NVIDIA-H100"}, {"kubernetes.io/hostname", "host-" + name}}}}},
      {"status",
       {{"capacity", {{"cpu", "64"}, {"memory", "1Ti"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
        {"allocatable",
         {{"cpu", "64"}, {"memory", "1Ti"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

inline json containers(int gpus) {
  return json::array({{{"name", "main"},
                       {"image", "trainer"},
                       {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}});
}

inline json plain_pod(const std::string& name, int gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "research"},
            {"uid", "uid-" + name},
            {"resourceVersion", "10"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec",
           {{"schedulingGates", json::array({{{"name", "kueue.x-k8s.io/admission"}}})},
            {"containers", containers(gpus)}}},
          {"status", {{"phase", "Pending"}}}};
}

inline json pytorchjob(const std::string& name, int workers, int gpus) {
  auto replica = [&](int n) {
    return json{{"replicas", n}, {"template", {{"spec", {{"containers", containers(gpus)}}}}}};
  };
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", name},
            {"namespace", "research"},
            {"uid", "uid-" + name},
            {"resourceVersion", "3"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec",
           {{"runPolicy", {{"suspend", true}}},
            {"pytorchReplicaSpecs", {{"Master", replica(1)}, {"Worker", replica(workers)}}}}}};
}

// A pod of the job as its operator makes it from the template the webhook gated and labelled,
// with another controller's gate beside gpuaas's unless `other_gates` says otherwise.
inline json job_pod(const std::string& job, const std::string& set, int i, int gpus,
                    const std::vector<std::string>& other_gates = {"example.com/other"}) {
  json gates = json::array({{{"name", "gpuaas.io/placement"}}});
  for (const auto& g : other_gates) gates.push_back({{"name", g}});
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", job + "-" + set + "-" + std::to_string(i)},
            {"namespace", "research"},
            {"uid", "uid-" + job + "-" + set + std::to_string(i)},
            {"resourceVersion", "20"},
            {"labels", {{"gpuaas.io/pod-set", set}}},
            {"ownerReferences", json::array({{{"apiVersion", "kubeflow.org/v1"},
                                              {"kind", "PyTorchJob"},
                                              {"name", job},
                                              {"uid", "uid-" + job},
                                              {"controller", true}}})}}},
          {"spec", {{"schedulingGates", std::move(gates)}, {"containers", containers(gpus)}}},
          {"status", {{"phase", "Pending"}}}};
}

}  // namespace gpuaas::core::binding_objects
