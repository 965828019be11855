// JSON lookups the stand-in controllers (stand_in_operator.hpp, stand_in_scheduler.hpp) share:
// they read objects as a controller does, where a missing or mistyped field is simply unset.
#pragma once

#include <initializer_list>

#include <nlohmann/json.hpp>

namespace gpuaas::bridge::stand_in {

// The value at a path of object keys, or null when any step is missing or not an object.
inline const nlohmann::json& At(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  static const nlohmann::json kNull;
  const nlohmann::json* at = &j;
  for (const char* key : keys) {
    if (!at->is_object()) return kNull;
    const auto it = at->find(key);
    if (it == at->end()) return kNull;
    at = &*it;
  }
  return *at;
}

inline bool True(const nlohmann::json& v) { return v.is_boolean() && v.get<bool>(); }

}  // namespace gpuaas::bridge::stand_in
