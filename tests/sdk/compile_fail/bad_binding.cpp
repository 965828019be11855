// expect: a kind's .binding must be Binding::kDefault
#include "gpuaas/plugin/sdk.hpp"

using namespace gpuaas;
struct Cast {
  static constexpr plugin::Info info{"cast", "1.0.0", plugin::Stability::kStable};
  static constexpr plugin::Kind kinds[] = {{.group = "example.com",
                                            .version = "v1",
                                            .kind = "Thing",
                                            .binding = static_cast<plugin::Binding>(7)}};
  v1::WorkloadDemand demand(const plugin::Workload&) { return {}; }
};
GPUAAS_PLUGIN(Cast)
