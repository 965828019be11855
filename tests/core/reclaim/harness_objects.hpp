// Workload objects the harness's scenarios (reclaim_harness.hpp) publish, as their users would
// create them: a batch Job, a Kubeflow Notebook, and a notebook gated by a webhook.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpuaas::core::test {

// A batch/v1 Job in team-b's queue with one pod of `gpus` GPUs, suspended or not.
inline nlohmann::json batch_job(const std::string& name, int gpus, bool suspend) {
  using nlohmann::json;
  const json container = {{"name", "main"},
                          {"image", "busybox"},
                          {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", "team-b"},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec",
           {{"suspend", suspend},
            {"parallelism", 1},
            {"completions", 1},
            {"template",
             {{"spec", {{"restartPolicy", "Never"}, {"containers", json::array({container})}}}}}}}};
}

// A Kubeflow Notebook of team-a with one GPU, in no queue.
inline nlohmann::json notebook(const std::string& name) {
  using nlohmann::json;
  const json container = {
      {"name", name}, {"image", "jupyter"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}};
  return {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "Notebook"},
      {"metadata",
       {{"name", name}, {"namespace", "team-a"}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
      {"spec", {{"template", {{"spec", {{"containers", json::array({container})}}}}}}}};
}

// A Kubeflow Notebook with one GPU in team-a's queue, created stopped (gated) as a webhook would.
inline nlohmann::json gated_notebook(const std::string& name) {
  using nlohmann::json;
  const json limits = {{"cpu", "2"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "1"}};
  const json container = {
      {"name", name}, {"image", "jupyter/scipy-notebook"}, {"resources", {{"limits", limits}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "Notebook"},
          {"metadata",
           {{"name", name},
            {"namespace", "team-a"},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}},
            {"annotations", {{"kubeflow-resource-stopped", "2026-01-01T00:00:00Z"}}}}},
          {"spec", {{"template", {{"spec", {{"containers", json::array({container})}}}}}}}};
}

}  // namespace gpuaas::core::test
