// Helpers the simulator's whole-run tests share: options for a policy with the built plugins, a
// scenario from YAML text, a run that must succeed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "gpuaas/sim/scenario.hpp"
#include "gpuaas/sim/simulation.hpp"

namespace gpuaas::sim::testing {

inline SimOptions options_for(Baseline b, uint64_t seed = 1) {
  SimOptions o;
  o.seed = seed;
  o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
  o.policy = b;
  return o;
}

inline Scenario scenario_of(const std::string& yaml) {
  auto s = parse_scenario(yaml, "test.yaml", "");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? std::move(s).value() : Scenario{};
}

inline RunResult run(const Scenario& s, const SimOptions& o) {
  auto r = run_simulation(s, o);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::move(r).value() : RunResult{};
}

inline RunResult run(const Scenario& s, Baseline b) { return run(s, options_for(b)); }

}  // namespace gpuaas::sim::testing
