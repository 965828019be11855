// Lifecycle reasons from status conditions.
#include "gpuaas/plugin/lifecycle.hpp"

#include <gtest/gtest.h>

namespace gpuaas::plugin {
namespace {

TEST(DescribeCondition, TypeAndReason) {
  const Json o = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"},
    "status":{"conditions":[
      {"type":"Failed","status":"True","reason":"BackoffLimitExceeded"},
      {"type":"Suspended","status":"True","reason":"Suspended"},
      {"type":"Complete","status":"False"}]}})");
  const Workload w(o);
  EXPECT_EQ(describe_condition(w, "Failed"), "Failed: BackoffLimitExceeded");
  EXPECT_EQ(describe_condition(w, "Suspended"), "Suspended");  // the reason says no more
  EXPECT_EQ(describe_condition(w, "Complete"), "Complete");    // no reason
  EXPECT_EQ(describe_condition(w, "Running"), "Running");      // no such condition
}

TEST(DescribeCondition, NoStatus) {
  const Json o = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"}})");
  EXPECT_EQ(describe_condition(Workload(o), "Failed"), "Failed");
}

}  // namespace
}  // namespace gpuaas::plugin
