// Workload objects the harness's scenarios (reclaim_harness.hpp) publish, as their users would
// create them: a batch Job, a Kubeflow Notebook, a notebook gated by a webhook, and a KServe
// InferenceService with its replica pods.
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

// The metadata of a team-a object created in its queue "main", with `annotations`.
inline nlohmann::json queued_meta(const std::string& name, nlohmann::json annotations) {
  return {{"name", name},
          {"namespace", "team-a"},
          {"uid", "uid-" + name},
          {"resourceVersion", "1"},
          {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}},
          {"annotations", std::move(annotations)}};
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
          {"metadata", queued_meta(name, {{"kubeflow-resource-stopped", "2026-01-01T00:00:00Z"}})},
          {"spec", {{"template", {{"spec", {{"containers", json::array({container})}}}}}}}};
}

// An InferenceService of team-a with one GPU per replica, held (KServe's stop annotation) until
// admitted, as a webhook would create it.
inline nlohmann::json inference_service(const std::string& name) {
  using nlohmann::json;
  const json limits = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "1"}};
  return {{"apiVersion", "serving.kserve.io/v1beta1"},
          {"kind", "InferenceService"},
          {"metadata", queued_meta(name, {{"serving.kserve.io/stop", "true"},
                                          {"serving.kserve.io/deploymentMode", "Knative"}})},
          {"spec",
           {{"predictor",
             {{"minReplicas", 1},
              {"maxReplicas", 1},
              {"model",
               {{"modelFormat", {{"name", "huggingface"}}},
                {"storageUri", "hf://example/chat"},
                {"resources", {{"limits", limits}, {"requests", limits}}}}}}}}}};
}

// A replica as Knative runs it: owned by a ReplicaSet the model does not hold, found by KServe's
// label.
inline nlohmann::json isvc_replica(const std::string& isvc, int i) {
  using nlohmann::json;
  const std::string name = isvc + "-predictor-00001-deployment-7d9f-" + std::to_string(i);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "team-a"},
            {"uid", "uid-" + name},
            {"labels", {{"serving.kserve.io/inferenceservice", isvc}}},
            {"ownerReferences",
             {{{"apiVersion", "apps/v1"},
               {"kind", "ReplicaSet"},
               {"name", isvc + "-predictor-00001-deployment-7d9f"},
               {"uid", "uid-rs"},
               {"controller", true}}}}}},
          {"spec",
           {{"nodeName", "gpu-0"},
            {"containers",
             {{{"name", "kserve-container"},
               {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

}  // namespace gpuaas::core::test
