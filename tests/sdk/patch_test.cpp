#include "gpuaas/plugin/patch.hpp"

#include <gtest/gtest.h>

namespace gpuaas::plugin {
namespace {

TEST(MergeDiff, RoundTripsThroughMergeApply) {
  Json from = Json::parse(R"({"a":1,"b":{"c":2,"d":3},"l":[1,2],"gone":true})");
  Json to = Json::parse(R"({"a":1,"b":{"c":5,"d":3},"l":[1,2,3],"new":{"x":1}})");
  Json p = merge_diff(from, to);
  EXPECT_EQ(p, Json::parse(R"({"b":{"c":5},"l":[1,2,3],"gone":null,"new":{"x":1}})"));
  Json applied = from;
  merge_apply(applied, p);
  EXPECT_EQ(applied, to);
  EXPECT_TRUE(merge_diff(to, to).empty());
}

TEST(MergeDiff, ListsTravelWhole) {
  Json from = Json::parse(R"({"spec":{"groups":[{"n":"a","r":2},{"n":"b","r":3}]}})");
  Json to = from;
  to["spec"]["groups"][1]["r"] = 0;
  EXPECT_EQ(merge_diff(from, to),
            Json::parse(R"({"spec":{"groups":[{"n":"a","r":2},{"n":"b","r":0}]}})"));
}

TEST(Patch, CarriesTheResourceVersionOnlyWhenGuarded) {
  Json o = Json::parse(
      R"({"apiVersion":"v1","kind":"X","metadata":{"name":"a","resourceVersion":"42"},"spec":{"s":true}})");
  Workload w(o);
  Json d = o;
  d["spec"]["s"] = false;
  EXPECT_EQ(Patch::between(w, d, Guard::kResourceVersion).body,
            Json::parse(R"({"spec":{"s":false},"metadata":{"resourceVersion":"42"}})"));
  EXPECT_EQ(Patch::between(w, d, Guard::kNone).body, Json::parse(R"({"spec":{"s":false}})"));
  EXPECT_TRUE(Patch::between(w, o, Guard::kResourceVersion).empty());
}

}  // namespace
}  // namespace gpuaas::plugin
