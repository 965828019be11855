// Errors a plugin throws; the SDK turns them into return codes at the ABI boundary, so no
// exception ever crosses it.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuaas::plugin {

// The object is malformed or lacks what the kind requires (GPUAAS_RC_INVALID_INPUT). Name where:
// InvalidInput("/spec/workerGroupSpecs/0/template: missing").
class InvalidInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The plugin does not offer this for this object (GPUAAS_RC_NOT_SUPPORTED), e.g. scale to zero
// of a kind that has no replicas to scale.
class NotSupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Anything else a plugin throws is an internal failure (GPUAAS_RC_INTERNAL); the host disables a
// plugin that keeps failing that way.

}  // namespace gpuaas::plugin
