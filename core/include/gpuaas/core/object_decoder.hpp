// Kubernetes JSON (as `kubectl get -o json` prints it) -> KubeObject. On the intake's hot path:
// simdjson, one parser reused per thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/core/kube_object.hpp"

namespace gpuaas::core {

class ObjectDecoder {
 public:
  ObjectDecoder();
  ~ObjectDecoder();
  ObjectDecoder(const ObjectDecoder&) = delete;
  ObjectDecoder& operator=(const ObjectDecoder&) = delete;

  // Errors are kInvalidInput and name the field: "metadata.name: missing".
  Result<KubeObject> decode(std::string json);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A stable uid for objects written by hand without one: the same kind, namespace and name always
// give the same uid, in the UUID text form Kubernetes uses.
std::string stable_uid(std::string_view kind, std::string_view ns, std::string_view name);

}  // namespace gpuaas::core
