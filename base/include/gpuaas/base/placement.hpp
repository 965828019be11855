// What binds a workload's pods to the nodes gpuaasd places them on, shared by the bridge (its
// webhook writes both into the pod templates of a kind whose binding is required) and the daemon
// (it opens the gate of each pod on its node, finding the pod's set by the label). In base so
// that neither side includes the other.
#pragma once

namespace gpuaas {

// The scheduling gate every pod of a required-binding workload is created behind.
inline constexpr const char kPlacementGate[] = "gpuaas.io/placement";
// The pod label naming the pod's set (gpuaas.v1.PodSet.name of the workload's demand).
inline constexpr const char kPodSetLabel[] = "gpuaas.io/pod-set";

}  // namespace gpuaas
