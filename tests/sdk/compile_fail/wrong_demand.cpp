// expect: demand must be callable as
#include "gpuaas/plugin/sdk.hpp"

struct Wrong {
  static constexpr gpuaas::plugin::Info info{"wrong", "1.0.0", gpuaas::plugin::Stability::kAlpha};
  static constexpr gpuaas::plugin::Kind kinds[] = {{"example.com", "v1", "Thing"}};
  int demand(const std::string&) { return 0; }  // the mistake: wrong parameter and result
};
GPUAAS_PLUGIN(Wrong)
