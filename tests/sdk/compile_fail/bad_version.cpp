// expect: info.version must be semver
#include "gpuaas/plugin/sdk.hpp"

using namespace gpuaas;
struct Old {
  static constexpr plugin::Info info{"old", "1.0", plugin::Stability::kStable};
  static constexpr plugin::Kind kinds[] = {{"example.com", "v1", "Thing"}};
  v1::WorkloadDemand demand(const plugin::Workload&) { return {}; }
};
GPUAAS_PLUGIN(Old)
