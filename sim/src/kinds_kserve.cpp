// InferenceService (KServe, serving.kserve.io/v1beta1). KServe has no suspend flag; gpuaas holds
// a service with KServe's stop annotation (`serving.kserve.io/stop: "true"`: KServe deletes the
// components' Deployments or Knative Services), and the kserve plugin's ADMIT removes it and puts
// the flavor's node labels into the predictor's inline PodSpec. SUSPEND sets it again.
#include <cctype>

#include "kinds_common.hpp"

namespace gpuaas::sim::kinds {
namespace {

constexpr const char* kStop = "serving.kserve.io/stop";
constexpr const char* kMode = "serving.kserve.io/deploymentMode";
// KServe's own default (its Helm chart's). Written on the object so that the plugin's
// `default_deployment_mode` setting cannot change how a simulated service is read.
constexpr const char* kDefaultMode = "Serverless";

// Where a component may give its model server container (the plugin's list, components.cpp).
constexpr const char* kModelKeys[] = {"model",  "sklearn", "xgboost",     "tensorflow", "pytorch",
                                      "triton", "onnx",    "huggingface", "pmml",       "lightgbm",
                                      "paddle", "art",     "alibi",       "aix"};

bool stopped(const json& o) {
  std::string v = annotation(o, kStop);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "true";  // KServe compares it without case
}

class InferenceServiceModel final : public KindModel {
 public:
  std::string_view kind() const override { return "InferenceService"; }
  std::string_view api_version() const override { return "serving.kserve.io/v1beta1"; }
  bool finishes() const override { return false; }

  // A predictor of minReplicas `pods`; maxReplicas `pods` (a fixed size, the pods the plugin's
  // demand counts) unless the spec says otherwise, and KServe's autoscaling fields if given.
  json make_object(const WorkloadSpec& spec) const override {
    require_pods(spec, 1);
    json o = object_head(spec, api_version(), kind());
    json& a = o["metadata"]["annotations"];
    if (!a.contains(kMode)) a[kMode] = kDefaultMode;
    a[kStop] = "true";
    json model = container("kserve-container", "", spec);
    model.erase("name");   // KServe names the model container itself
    model.erase("image");  // and takes the image from the ServingRuntime
    model["modelFormat"] = {{"name", "huggingface"}};
    model["storageUri"] = "hf://example/model";
    json predictor = {{"minReplicas", spec.pods}, {"model", model}};
    const int32_t max = spec.max_replicas < 0 ? spec.pods : spec.max_replicas;
    if (max > 0) predictor["maxReplicas"] = max;
    if (!spec.scale_metric.empty()) predictor["scaleMetric"] = spec.scale_metric;
    if (spec.scale_target > 0) predictor["scaleTarget"] = spec.scale_target;
    o["spec"] = {{"predictor", std::move(predictor)}};
    return o;
  }

  bool admitted(const json& o) const override { return !stopped(o); }

  // KServe's labels on a component's pods (the kserve plugin finds the pods by the first).
  std::map<std::string, std::string> pod_labels(const json& o,
                                                std::string_view pod_set) const override {
    const json* name = find(o, "/metadata/name");
    return {{"serving.kserve.io/inferenceservice",
             name != nullptr && name->is_string() ? name->get<std::string>() : ""},
            {"component", std::string(pod_set)}};
  }

  // Each component runs minReplicas pods (KServe's default 1). minReplicas 0 is scale to zero
  // (the plugin's SCALE_TO_ZERO in Knative mode): Knative removes idle pods and brings one back
  // on a request. The object says nothing of traffic, so this runs none; a simulator that plays
  // requests must add the woken pod itself.
  std::vector<PodShape> pods(const json& o) const override {
    std::vector<PodShape> out;
    if (stopped(o)) return out;
    for (const char* name : {"predictor", "transformer", "explainer"}) {
      const json* c = find(o, std::string("/spec/") + name);
      if (c == nullptr || !c->is_object()) continue;
      const int64_t n = integer(*c, "/minReplicas", 1);
      if (n <= 0) continue;
      json extra = json::array();
      for (const char* key : kModelKeys) {
        if (auto it = c->find(key); it != c->end() && it->is_object()) extra.push_back(*it);
      }
      out.push_back(shape_of(name, static_cast<int32_t>(n), *c, extra));
    }
    return out;
  }

  // The Ready condition and modelStatus KServe writes; deploymentMode as KServe records it.
  void set_phase(json& o, Phase phase) const override {
    auto cond = [](const char* type, const char* status, const char* reason) {
      return json{{"type", type}, {"status", status}, {"reason", reason}};
    };
    std::string mode = annotation(o, kMode);
    json status = {{"deploymentMode", mode.empty() ? kDefaultMode : mode}};
    switch (phase) {
      case Phase::kPending:
        status["conditions"] = {cond("PredictorReady", "Unknown", "RevisionMissing"),
                                cond("Ready", "Unknown", "RevisionMissing")};
        status["modelStatus"] = {
            {"transitionStatus", "InProgress"},
            {"states", {{"activeModelState", "Pending"}, {"targetModelState", "Loading"}}}};
        break;
      case Phase::kRunning:
        status["conditions"] = {cond("IngressReady", "True", ""),
                                cond("PredictorReady", "True", ""), cond("Ready", "True", "")};
        status["modelStatus"] = {
            {"transitionStatus", "UpToDate"},
            {"states", {{"activeModelState", "Loaded"}, {"targetModelState", "Loaded"}}}};
        status["url"] = "http://" + o["metadata"].value("name", "") + "." +
                        o["metadata"].value("namespace", "default") + ".example.com";
        break;
      case Phase::kFailed:
        status["conditions"] = {cond("PredictorReady", "False", "ModelLoadFailed"),
                                cond("Ready", "False", "ModelLoadFailed")};
        status["modelStatus"] = {
            {"transitionStatus", "BlockedByFailedLoad"},
            {"states",
             {{"activeModelState", "FailedToLoad"}, {"targetModelState", "FailedToLoad"}}},
            {"lastFailureInfo", {{"reason", "ModelLoadFailed"}, {"message", "simulated failure"}}}};
        break;
      case Phase::kSucceeded:
        no_such_phase(kind(), phase);
    }
    o["status"] = std::move(status);
  }
};

}  // namespace

const KindModel& inference_service_model() {
  static const InferenceServiceModel model;
  return model;
}

}  // namespace gpuaas::sim::kinds
