#include "gpuaas/plugin/patch.hpp"

#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::plugin {

Json merge_diff(const Json& from, const Json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  Json patch = Json::object();
  for (const auto& [key, value] : from.items()) {
    if (!to.contains(key)) patch[key] = nullptr;
  }
  for (const auto& [key, value] : to.items()) {
    auto old = from.find(key);
    if (value.is_null()) continue;  // not expressible in a merge patch
    if (old == from.end()) {
      patch[key] = value;
    } else if (*old != value) {
      patch[key] = old->is_object() && value.is_object() ? merge_diff(*old, value) : value;
    }
  }
  return patch;
}

void merge_apply(Json& target, const Json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = Json::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
    } else {
      merge_apply(target[key], value);
    }
  }
}

Patch Patch::between(const Workload& w, const Json& desired, Guard guard) {
  Patch p;
  p.body = merge_diff(w.json(), desired);
  if (!p.body.is_object()) throw InvalidInput("the edited object is not a JSON object");
  std::string rv = w.resource_version();
  if (guard == Guard::kResourceVersion && !p.empty() && !rv.empty()) {
    p.body["metadata"]["resourceVersion"] = rv;
  }
  return p;
}

Patch Patch::remove() {
  Patch p;
  p.delete_object = true;
  return p;
}

}  // namespace gpuaas::plugin
