// The simulator counts GPU time and cost by itself, from its own cluster; gpuaasd's ledger counts
// them from the events the simulator publishes (pods, dcgm-exporter samples, reservations). At
// the end of a run the two must agree: the simulator's report is the check on the metrics.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "gpuaas/sim/simulation.hpp"
#include "sim_test_support.hpp"

namespace gpuaas::sim {
namespace {

using nlohmann::json;
using testing::options_for;
using testing::run;
using testing::scenario_of;

// Two tenants, a node pool that grows: four 2-GPU jobs of 1 h for team-a, two 4-GPU jobs of
// 30 min for team-b, on 4-GPU nodes at 16 an hour (4 a GPU-hour).
const char* kTwoTenants = R"(apiVersion: gpuaas.io/v1alpha1
kind: Scenario
metadata: {name: two-tenants}
spec:
  duration: 3h
  nodePools:
    - {name: a100, flavor: a100, gpusPerNode: 4, nodes: 1, minNodes: 1, maxNodes: 3,
       provisioningTime: 5m, pricePerNodeHour: 16}
  workloads:
    - {name: train, namespace: team-a, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 2,
       duration: 1h, count: 4, utilization: 0.6}
    - {name: tune, namespace: team-b, queue: batch, kind: PyTorchJob, pods: 1, gpusPerPod: 4,
       duration: 30m, count: 2, submitAt: 20m, utilization: 0.9}
)";

const json* project(const json& report, const std::string& ns) {
  for (const auto& t : report["tenants"])
    for (const auto& p : t["projects"])
      if (p["namespace"] == ns) return &p;
  return nullptr;
}

TEST(LedgerAgreementTest, TheDaemonsLedgerMatchesTheSimulatorsAccounts) {
  const RunResult r = run(scenario_of(kTwoTenants), options_for(Baseline::kGpuaas));
  const json report = json::parse(r.daemon_report, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.daemon_report;
  // The simulator's busy time is the time its workloads are in their busy phase; dcgm reports
  // `utilization` of it, which is what the ledger integrates.
  const std::map<std::string, double> utilization = {{"team-a", 0.6}, {"team-b", 0.9}};
  for (const char* ns : {"team-a", "team-b"}) {
    SCOPED_TRACE(ns);
    const json* p = project(report, ns);
    ASSERT_NE(p, nullptr) << report.dump(2);
    const TenantFigures& t = r.tenants.at(ns);
    const double alloc = t.allocated_gpu_seconds / 3600;
    ASSERT_GT(alloc, 0);
    // The simulator binds and frees pods at exact instants; the daemon sees them as events of
    // the same instants: the same GPU-hours (to the report's rounding).
    EXPECT_NEAR((*p)["gpu_hours"]["allocated"].get<double>(), alloc, 0.01 * alloc);
    // A dcgm sample holds until the next: a run's busy time starts at its first sample, up to a
    // sampling interval late.
    const double busy = utilization.at(ns) * t.busy_gpu_seconds / 3600;
    EXPECT_NEAR((*p)["gpu_hours"]["busy"].get<double>(), busy, 0.05 * busy);
    // Every job that finished is a verified outcome on both sides.
    EXPECT_EQ((*p)["outcomes"]["jobs"].get<double>(), static_cast<double>(t.outcomes));
  }
  // The cluster's cost: node-hours at the pool's price on both sides, nodes being provisioned
  // included (the ledger counts those the pool asked for and that have not registered yet).
  EXPECT_NEAR(report["cluster"]["cost"].get<double>(), r.cost, 0.01 * r.cost) << report.dump(2);
  EXPECT_EQ(report["cluster"]["flavors"][0]["price_source"], "NodePool");
}

}  // namespace
}  // namespace gpuaas::sim
