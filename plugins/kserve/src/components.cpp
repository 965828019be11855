#include "components.hpp"

#include <array>
#include <cstdint>
#include <string_view>

#include "annotations.hpp"
#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/pod_templates.hpp"

namespace gpuaas::kserve {
namespace {

using plugin::InvalidInput;
using plugin::Json;

constexpr std::array<const char*, 3> kComponents = {"predictor", "transformer", "explainer"};

// Where each component may name its model server container. v1beta1 takes exactly one.
constexpr std::array<const char*, 11> kPredictorImplementations = {
    "model", "sklearn",     "xgboost", "tensorflow", "pytorch", "triton",
    "onnx",  "huggingface", "pmml",    "lightgbm",   "paddle"};
constexpr std::array<const char*, 3> kExplainerImplementations = {"art", "alibi", "aix"};

// KServe's name for the model server container when the spec gives none (or "").
constexpr const char* kModelContainerName = "kserve-container";

template <std::size_t N>
std::vector<std::string> present(const Json& component, const std::array<const char*, N>& keys) {
  std::vector<std::string> out;
  for (const char* k : keys) {
    auto it = component.find(k);
    if (it != component.end() && !it->is_null()) out.emplace_back(k);
  }
  return out;
}

}  // namespace

std::vector<Component> components(const plugin::Workload& w) {
  std::vector<Component> out;
  for (const char* name : kComponents) {
    std::string ptr = std::string("/spec/") + name;
    const Json* c = w.find(ptr);
    if (c == nullptr || c->is_null()) {
      if (std::string_view(name) == "predictor") throw InvalidInput(ptr + ": missing");
      continue;
    }
    if (!c->is_object()) throw InvalidInput(ptr + ": not an object");
    out.push_back({name, ptr});
  }
  return out;
}

std::vector<std::string> pod_spec_pointers(const plugin::Workload& w) {
  std::vector<std::string> out;
  for (const auto& c : components(w)) out.push_back(c.pointer);
  return out;
}

PodSpecView pod_spec(const plugin::Workload& w, const Component& c) {
  const Json& component = w.at(c.pointer);
  std::vector<std::string> impl;
  if (c.name == "predictor") impl = present(component, kPredictorImplementations);
  if (c.name == "explainer") impl = present(component, kExplainerImplementations);
  if (impl.size() > 1) {
    std::string list;
    for (const auto& k : impl) list += (list.empty() ? "" : ", ") + k;
    throw InvalidInput(c.pointer + ": more than one model server (" + list + "); KServe takes one");
  }

  PodSpecView view;
  view.spec = component;
  Json& containers = view.spec["containers"];
  if (containers.is_null()) containers = Json::array();
  if (!containers.is_array()) throw InvalidInput(c.pointer + "/containers: not a list");
  if (impl.empty()) {
    if (containers.empty()) {
      throw InvalidInput(c.pointer + ": no model server: give " +
                         (c.name == "predictor"
                              ? "model, a framework (sklearn, huggingface, ...) or "
                          : c.name == "explainer" ? "art or "
                                                  : "") +
                         "containers");
    }
    return view;
  }
  view.model_pointer = c.pointer + "/" + impl.front();
  const Json& model = component.at(impl.front());
  if (!model.is_object()) throw InvalidInput(view.model_pointer + ": not an object");
  Json container = model;
  if (!container.contains("name") || container["name"] == "")
    container["name"] = kModelContainerName;
  view.model_index = static_cast<int>(containers.size());
  containers.push_back(std::move(container));
  return view;
}

namespace {

// A Kubernetes int32 count: `fallback` when null, InvalidInput unless an integer 0..2^31-1.
int64_t int32_value(const Json* v, const std::string& where, int64_t fallback) {
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT32_MAX)) {
      throw InvalidInput(where + ": " + v->dump() +
                         " is above 2147483647, the largest Kubernetes int32");
    }
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer() && v->get<int64_t>() >= 0) return v->get<int64_t>();
  throw InvalidInput(where + ": want a count 0..2147483647, got " + v->dump());
}

}  // namespace

int64_t int32_at(const plugin::Workload& w, const std::string& pointer, int64_t fallback) {
  return int32_value(w.find(pointer), pointer, fallback);
}

int64_t min_replicas(const plugin::Workload& w, const Component& c) {
  const std::string ptr = c.pointer + "/minReplicas";
  // What scale-to-zero recorded, if it set this field: the owner's value (null: unset).
  std::string saved_text = w.annotation(plugin::kScaledFromAnnotation);
  if (!saved_text.empty()) {
    Json saved = Json::parse(saved_text, nullptr, /*allow_exceptions=*/false);
    if (saved.is_object() && saved.contains(ptr)) {
      return int32_value(
          &saved[ptr],
          annotation_pointer(plugin::kScaledFromAnnotation) + " (recorded " + ptr + ")", 1);
    }
  }
  return int32_at(w, ptr, 1);
}

int64_t max_replicas(const plugin::Workload& w, const Component& c) {
  int64_t max = int32_at(w, c.pointer + "/maxReplicas", 0);
  int64_t min = min_replicas(w, c);
  if (max != 0 && max < min) {
    throw InvalidInput(c.pointer + "/maxReplicas: " + std::to_string(max) +
                       " is below minReplicas " + std::to_string(min));
  }
  return max;
}

}  // namespace gpuaas::kserve
