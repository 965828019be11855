#include "answers_scene.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gpuaas::bench {
namespace {

int64_t namespace_demand(const AnswersScene& s, int k) {
  return s.workloads / s.namespaces + (k < s.workloads % s.namespaces ? 1 : 0);
}

int64_t tenant_quota(const AnswersScene& s, int t) {
  int64_t demand = 0;
  for (int k = t; k < s.namespaces; k += s.tenants) demand += namespace_demand(s, k);
  return demand - std::llround(static_cast<double>(demand) * s.queued_share);
}

}  // namespace

std::string answers_policy_yaml(const AnswersScene& s) {
  std::ostringstream y;
  y << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"
       "spec:\n  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n";
  for (int t = 0; t < s.tenants; ++t) {
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: tenant-"
      << t
      << "}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n"
         "  - coveredResources: [\"nvidia.com/gpu\"]\n    flavors:\n    - name: h100\n"
         "      resources:\n      - {name: nvidia.com/gpu, nominalQuota: "
      << tenant_quota(s, t) << "}\n";
  }
  for (int k = 0; k < s.namespaces; ++k) {
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
         "metadata: {name: main, namespace: team-"
      << k << "}\nspec: {clusterQueue: tenant-" << k % s.tenants << "}\n";
  }
  // An expected duration gives queued Jobs an estimated start; a price gives the report costs.
  y << "---\napiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata: {name: default}\n"
       "spec:\n  expectedDuration: {default: 1h}\n"
       "---\napiVersion: gpuaas.io/v1alpha1\nkind: CostModel\nmetadata: {name: prices}\n"
       "spec:\n  currency: USD\n  flavors: [{name: h100, pricePerGPUHour: 4.10}]\n";
  return y.str();
}

std::string answers_nodes_yaml(const AnswersScene& s) {
  std::ostringstream y;
  for (int i = 0; i < s.nodes; ++i) {
    y << "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: h100-" << i
      << "\n  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\nstatus:\n"
         "  capacity: {cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \""
      << kAnswersGpusPerNode
      << "\"}\n  allocatable: {cpu: \"94\", memory: 1000Gi, nvidia.com/gpu: \""
      << kAnswersGpusPerNode << "\"}\n  conditions: [{type: Ready, status: \"True\"}]\n";
  }
  return y.str();
}

std::string answers_jobs_yaml(const AnswersScene& s) {
  std::ostringstream y;
  for (int i = 0; i < s.workloads; ++i) {
    y << "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job-" << i
      << "\n  namespace: team-" << i % s.namespaces
      << "\n  labels: {kueue.x-k8s.io/queue-name: main}\nspec:\n  suspend: true\n"
         "  template:\n    spec:\n      containers:\n      - name: main\n"
         "        resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
  }
  return y.str();
}

std::string answers_pods_yaml(const AnswersScene& s) {
  std::ostringstream y;
  auto pod = [&](const std::string& ns, const std::string& name, int node,
                 const std::string& owner) {
    y << "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name << "\n  namespace: " << ns
      << "\n";
    if (!owner.empty())
      y << "  ownerReferences:\n  - {apiVersion: batch/v1, kind: Job, name: " << owner
        << ", uid: " << owner << "-uid, controller: true}\n";
    y << "spec:\n  nodeName: h100-" << node
      << "\n  containers:\n  - {name: main, image: example/train:1,"
         " resources: {limits: {nvidia.com/gpu: \"1\"}}}\nstatus: {phase: Running}\n";
  };
  const int nodes = std::max(1, s.nodes);
  for (int k = 0; k < answers_pods(s) - 1; ++k)
    pod("team-" + std::to_string(k), "job-" + std::to_string(k) + "-run", k % nodes,
        "job-" + std::to_string(k));
  pod("team-0", "scratch", (nodes - 1), "");
  return y.str();
}

int64_t answers_admitted(const AnswersScene& s) {
  int64_t n = 0;
  for (int t = 0; t < s.tenants; ++t) n += tenant_quota(s, t);
  return n;
}

int answers_tenant_rows(const AnswersScene& s) {
  return std::min({s.tenants, s.namespaces, s.workloads}) + 1;
}

}  // namespace gpuaas::bench
