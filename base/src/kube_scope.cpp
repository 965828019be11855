#include "gpuaas/base/kube_scope.hpp"

#include <algorithm>
#include <array>

namespace gpuaas {

bool cluster_scoped_kind(std::string_view kind) {
  static constexpr std::array<std::string_view, 27> kKinds = {
      "Node",
      "Namespace",
      "PersistentVolume",
      "ClusterRole",
      "ClusterRoleBinding",
      "StorageClass",
      "PriorityClass",
      "RuntimeClass",
      "CustomResourceDefinition",
      "ResourceFlavor",
      "ClusterQueue",
      "Cohort",
      "WorkloadPriorityClass",
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
      "IngressClass",
      "CSIDriver",
      "CSINode",
      "VolumeAttachment",
      "APIService",
      // gpuaas.io: the policy in force and the policy kinds of its files
      "PolicySet",
      "AdmissionPolicy",
      "IdleReclaimPolicy",
      "NotebookPolicy",
      "NodePool",
      "CostModel",
      "ServiceObjective",
  };
  return std::find(kKinds.begin(), kKinds.end(), kind) != kKinds.end();
}

}  // namespace gpuaas
