#include "gpuaas/plugin/patch.hpp"

#include <gtest/gtest.h>

#include "gpuaas/plugin/plugin.hpp"

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

TEST(Patch, RemoveBecomesADeleteWithoutABody) {
  Json o = Json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u","resourceVersion":"3"}})");
  Workload w(o);
  Patch p = Patch::remove();
  EXPECT_FALSE(p.empty());
  v1::ActionRequest r;
  r.set_reason("preempted");
  v1::ActionSet set = detail::to_action_set(w, p, r);
  ASSERT_EQ(set.actions_size(), 1);
  const v1::Action& a = set.actions(0);
  EXPECT_EQ(a.operation(), v1::Action::DELETE);
  EXPECT_EQ(a.body_json(), "");
  EXPECT_EQ(a.target().kind(), "Pod");
  EXPECT_EQ(a.target().name(), "p");
  EXPECT_EQ(a.target().uid(), "u");
  EXPECT_EQ(a.reason(), "preempted");
  // A patch still goes as a merge patch, and no patch as no action.
  EXPECT_EQ(detail::to_action_set(w, Patch{}, r).actions_size(), 0);
  Patch label;
  label.body = Json::parse(R"({"metadata":{"labels":{"a":"b"}}})");
  EXPECT_EQ(detail::to_action_set(w, label, r).actions(0).operation(), v1::Action::MERGE_PATCH);
}

}  // namespace
}  // namespace gpuaas::plugin
