// The load target the capacity tests aim at a SlotServer: its URL and model, short timeouts.
#pragma once

#include "gpuaas/capacity/load_runner.hpp"
#include "support/slot_server.hpp"

namespace gpuaas::testing {

inline capacity::LoadTarget target_of(const SlotServer& s) {
  capacity::LoadTarget t;
  t.base_url = s.url();
  t.model = "slot-model";
  t.request_timeout = 10;
  t.stall_timeout = 1;
  return t;
}

}  // namespace gpuaas::testing
