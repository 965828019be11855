// expect: admission needs both admit\(\) and suspend\(\)
#include "gpuaas/plugin/sdk.hpp"

using namespace gpuaas;
struct Half {
  static constexpr plugin::Info info{"half", "1.0.0", plugin::Stability::kAlpha};
  static constexpr plugin::Kind kinds[] = {{"example.com", "v1", "Thing"}};
  v1::WorkloadDemand demand(const plugin::Workload&) { return {}; }
  plugin::Patch admit(const plugin::Workload&, const v1::ActionRequest&) { return {}; }
};
GPUAAS_PLUGIN(Half)
