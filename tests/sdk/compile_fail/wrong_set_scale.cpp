// expect: set_scale must be callable as
#include "gpuaas/plugin/sdk.hpp"

using namespace gpuaas;
struct Scaler {
  static constexpr plugin::Info info{"scaler", "1.0.0", plugin::Stability::kAlpha};
  static constexpr plugin::Kind kinds[] = {{"example.com", "v1", "Thing"}};
  v1::WorkloadDemand demand(const plugin::Workload&) { return {}; }
  // The bounds come in the request: a set_scale without it is not the SDK's.
  plugin::Patch set_scale(const plugin::Workload&, int replicas) { return {}; }
};
GPUAAS_PLUGIN(Scaler)
