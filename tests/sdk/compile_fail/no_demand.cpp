// expect: a workload plugin must define
#include "gpuaas/plugin/sdk.hpp"

using namespace gpuaas;
struct Nothing {
  static constexpr plugin::Info info{"nothing", "1.0.0", plugin::Stability::kStable};
  static constexpr plugin::Kind kinds[] = {{"example.com", "v1", "Thing"}};
};
GPUAAS_PLUGIN(Nothing)
