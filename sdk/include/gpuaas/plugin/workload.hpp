// A workload object as the plugin sees it: the Kubernetes JSON, with accessors that name the
// path of what is missing or malformed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpuaas/v1/event.pb.h"

namespace gpuaas::plugin {

using Json = nlohmann::json;

// Kueue's labels: which LocalQueue the workload goes to, and its WorkloadPriorityClass.
inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";

// One key as a JSON pointer token (RFC 6901: '~' -> "~0", '/' -> "~1"), e.g. an annotation's
// key in "/metadata/annotations/<token>".
inline std::string pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

class Workload {
 public:
  // Throws InvalidInput when the object is not a JSON object with apiVersion, kind and name.
  explicit Workload(const Json& object);

  const Json& json() const { return object_; }
  std::string api_version() const;
  std::string kind() const;
  std::string name() const;
  std::string namespace_() const;
  std::string uid() const;
  std::string resource_version() const;
  v1::ObjectRef ref() const;

  // "" when absent (or not a string).
  std::string label(std::string_view key) const;
  std::string annotation(std::string_view key) const;
  bool has_annotation(std::string_view key) const;

  // The value at a JSON pointer ("/spec/headGroupSpec/template"), or nullptr.
  const Json* find(const std::string& pointer) const;
  // The value at a JSON pointer; throws InvalidInput("<pointer>: missing") when absent.
  const Json& at(const std::string& pointer) const;
  // An integer at a pointer: `fallback` when absent; InvalidInput when not a non-negative integer.
  int64_t count_at(const std::string& pointer, int64_t fallback) const;
  // The same for Kubernetes' int32 fields (replicas, parallelism): InvalidInput above 2^31-1.
  int64_t int32_count_at(const std::string& pointer, int64_t fallback) const;
  // A boolean at a pointer: `fallback` when absent; InvalidInput when not a boolean.
  bool flag_at(const std::string& pointer, bool fallback) const;

  // status.conditions[] entry of that type, or nullptr; and whether its status is "True".
  const Json* condition(std::string_view type) const;
  bool condition_true(std::string_view type) const;

 private:
  const Json& object_;
};

}  // namespace gpuaas::plugin
