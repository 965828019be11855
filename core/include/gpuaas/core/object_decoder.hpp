// Kubernetes JSON (as `kubectl get -o json` prints it) -> KubeObject. On the intake's hot path:
// simdjson, one parser reused per thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/wire/uuid_text.hpp"

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

// A stable uid for objects written by hand without one (wire::stable_uid).
using wire::stable_uid;

}  // namespace gpuaas::core
