// A workload as the admission engine sees it: what it asks for, where it queues, how urgent it
// is. The daemon fills it from the object and its plugin's answer; the engine never parses
// Kubernetes objects itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/admission/resources.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core::admission {

// Event time in milliseconds: decisions never read the wall clock.
using Time = std::chrono::sys_time<std::chrono::milliseconds>;
using Seconds = std::chrono::seconds;

struct PodSetRequest {
  std::string name;
  int64_t count = 0;
  int64_t min_count = 0;  // partial admission down to this; 0 or >= count: all or nothing
  Amounts per_pod;        // by interned resource (Scheduler::resources())
  policy::LabelMap node_selector;
  std::vector<policy::Toleration> tolerations;
};

// What the object says about where it stands, as its plugin reads it.
enum class ObservedState {
  kWaiting,   // suspended or not yet started: wants admission
  kRunning,   // running (admitted by us, or started outside the queue)
  kFinished,  // succeeded or failed: its quota returns
};

struct WorkloadInfo {
  std::string key;  // unique identity across updates, e.g. "kubeflow.org/PyTorchJob/ns/name"
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string local_queue;                   // label kueue.x-k8s.io/queue-name
  std::string priority_class;                // label kueue.x-k8s.io/priority-class
  Time created{};                            // queue order within a priority (FIFO)
  std::optional<Time> deadline;              // annotation gpuaas.io/deadline
  std::optional<Seconds> expected_duration;  // annotation gpuaas.io/expected-duration
  std::vector<PodSetRequest> pod_sets;
  ObservedState observed = ObservedState::kWaiting;
};

}  // namespace gpuaas::core::admission
