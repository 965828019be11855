// The cost report as a user meets it: gpuaasd on a real nats-server with a policy that prices the
// flavor, a node and a running job's pod applied with gpuaasctl, then `gpuaasctl report` (table
// and JSON) and its mistakes. The figures themselves are checked by hand in
// tests/core/cost/; here the command, its keys and its exit codes.
#include <gtest/gtest.h>

#include "daemon_e2e.hpp"

namespace gpuaas::testing {
namespace {

// The admission tests' cluster, its flavor priced, and a running pod of 2 GPUs on the node.
const std::string kPolicy = std::string(kH100QueuePolicy) + R"(---
apiVersion: gpuaas.io/v1alpha1
kind: CostModel
metadata: {name: prices}
spec:
  currency: EUR
  flavors: [{name: h100, pricePerGPUHour: 4}]
)";

const std::string kCluster = std::string(kH100Node) + R"(---
apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: team-a}
spec:
  nodeName: h100-a
  containers:
  - {name: main, image: example/train:1, resources: {limits: {nvidia.com/gpu: "2"}}}
status: {phase: Running}
)";

class ReportEndToEnd : public DaemonEndToEnd {
 protected:
  ReportEndToEnd() : DaemonEndToEnd("report") {}
};

TEST_F(ReportEndToEnd, PrintsThePerTenantTableAndItsJson) {
  start_daemon(kPolicy);
  ASSERT_EQ(apply("cluster.yaml", kCluster), 0);
  // Ticks move event time: wait (bounded) until the pod's GPU-time shows.
  json r;
  ASSERT_TRUE(eventually([&] {
    auto out = ctl("report --json");
    r = json::parse(out.out, nullptr, false);
    return out.exit_code == 0 && r.is_object() && !r["tenants"].empty() &&
           r["tenants"][0]["gpu_hours"]["allocated"].get<double>() > 0;
  })) << r.dump(2)
      << log();
  EXPECT_EQ(r["currency"], "EUR");
  for (const char* k : {"from", "to", "window_seconds", "tenants", "cluster"})
    EXPECT_TRUE(r.contains(k)) << k;
  const json& t = r["tenants"][0];
  EXPECT_EQ(t["tenant"], "");  // a bare pod is in no ClusterQueue
  EXPECT_EQ(t["projects"][0]["namespace"], "team-a");
  for (const char* k : {"gpu_hours", "outcomes", "cost", "cost_per_outcome"})
    EXPECT_TRUE(t.contains(k)) << k;
  EXPECT_EQ(r["cluster"]["flavors"][0]["flavor"], "h100");
  EXPECT_EQ(r["cluster"]["flavors"][0]["price_source"], "CostModel");
  EXPECT_DOUBLE_EQ(r["cluster"]["flavors"][0]["gpu_hour_price"].get<double>(), 4.0);

  const auto table = ctl("report --projects --since 1h 2>&1");
  EXPECT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("TENANT"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("team-a"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(no queue)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("CostModel"), std::string::npos) << table.out;

  // By pages: the same tenant, in a page with the cluster's totals beside it.
  const auto page = ctl("report --json --limit 1 --since 1h");
  ASSERT_EQ(page.exit_code, 0) << page.out;
  const json p = json::parse(page.out);
  EXPECT_EQ(p["section"], "tenants");
  ASSERT_EQ(p["items"].size(), 1u) << p.dump();
  EXPECT_EQ(p["items"][0]["tenant"], "");
  EXPECT_TRUE(p["next"].is_null()) << "one tenant: the only page";
  EXPECT_DOUBLE_EQ(p["cluster"]["flavors"][0]["gpu_hour_price"].get<double>(), 4.0);

  const auto bad = ctl("report --since soon 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("--since soon"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace gpuaas::testing
