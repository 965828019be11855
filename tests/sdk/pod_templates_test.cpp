#include "gpuaas/plugin/pod_templates.hpp"

#include <gtest/gtest.h>

#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::plugin {
namespace {

Json object() {
  return Json::parse(R"({"apiVersion":"v1","kind":"X","metadata":{"name":"a"},"spec":{
      "head":{"template":{"spec":{"containers":[{"name":"h"}]}}},
      "workers":[{"replicas":3,"template":{"spec":{"nodeSelector":{"zone":"a"},
          "tolerations":[{"key":"k","operator":"Exists"}],"containers":[{"name":"w"}]}}}]}})");
}

v1::ActionRequest flavor() {
  v1::ActionRequest r;
  (*r.mutable_node_labels())["gpu.product"] = "H100";
  r.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
  r.add_tolerations_json(R"({"key":"k","operator":"Exists"})");  // already there: not doubled
  r.set_flavor("h100");
  return r;
}

const std::vector<std::string> kTemplates = {"/spec/head/template/spec",
                                             "/spec/workers/0/template/spec"};

TEST(PodTemplates, FlavorMergesAndRestoreUndoesIt) {
  Json o = object();
  apply_flavor(o, kTemplates, flavor());
  const Json& head = o["spec"]["head"]["template"]["spec"];
  const Json& worker = o["spec"]["workers"][0]["template"]["spec"];
  EXPECT_EQ(head["nodeSelector"], Json::parse(R"({"gpu.product":"H100"})"));
  EXPECT_EQ(head["tolerations"].size(), 2u);
  EXPECT_EQ(worker["nodeSelector"], Json::parse(R"({"zone":"a","gpu.product":"H100"})"));
  EXPECT_EQ(worker["tolerations"].size(), 2u);
  EXPECT_EQ(o["metadata"]["annotations"][kFlavorAnnotation], "h100");

  // Admitting again (another flavor) starts from the originals, not from the last flavor.
  v1::ActionRequest other;
  (*other.mutable_node_labels())["gpu.product"] = "A100";
  apply_flavor(o, kTemplates, other);
  EXPECT_EQ(o["spec"]["workers"][0]["template"]["spec"]["tolerations"].size(), 1u);

  restore_templates(o);
  EXPECT_EQ(o, object());
}

// placement.binding preferred: the planned hosts as a preferred node affinity, added beside the
// template's own and put back as it was.
TEST(PodTemplates, PreferredHostsBecomeAPreferredAffinityAndRestoreUndoesIt) {
  Json o = object();
  o["spec"]["head"]["template"]["spec"]["affinity"] = Json::parse(R"({"nodeAffinity":
      {"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":
      {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}}]}})");
  const Json before = o;
  v1::ActionRequest r = flavor();
  r.add_preferred_hostnames("host-a");
  r.add_preferred_hostnames("host-b");
  apply_flavor(o, kTemplates, r);
  const Json head = o["spec"]["head"]["template"]["spec"]["affinity"]["nodeAffinity"]
                     ["preferredDuringSchedulingIgnoredDuringExecution"];
  ASSERT_EQ(head.size(), 2u) << "the template's own preference is kept";
  EXPECT_EQ(head[1], Json::parse(R"({"weight":100,"preference":{"matchExpressions":[
      {"key":"kubernetes.io/hostname","operator":"In","values":["host-a","host-b"]}]}})"));
  const Json worker = o["spec"]["workers"][0]["template"]["spec"]["affinity"];
  EXPECT_EQ(worker["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u);
  EXPECT_FALSE(worker["nodeAffinity"].contains("requiredDuringSchedulingIgnoredDuringExecution"))
      << "preferred never narrows";
  restore_templates(o);
  EXPECT_EQ(o, before);
}

TEST(PodTemplates, ARecordWithoutAffinityLeavesTheAffinityAlone) {
  // Recorded by an SDK before preferred binding: no "affinity" key, so none is put back.
  Json o = object();
  o["spec"]["head"]["template"]["spec"]["affinity"] = Json::parse(R"({"podAffinity":{}})");
  apply_flavor(o, kTemplates, flavor());
  restore_templates(o);
  EXPECT_EQ(o["spec"]["head"]["template"]["spec"]["affinity"],
            Json::parse(R"({"podAffinity":{}})"));
}

TEST(PodTemplates, ScaleToZeroAndBack) {
  Json o = object();
  std::vector<std::string> ptrs = {"/spec/workers/0/replicas", "/spec/workers/0/minReplicas"};
  scale_to(o, ptrs, 0);
  EXPECT_EQ(o["spec"]["workers"][0]["replicas"], 0);
  EXPECT_EQ(o["spec"]["workers"][0]["minReplicas"], 0);
  scale_to(o, ptrs, 0);  // twice: the first record stays
  EXPECT_TRUE(scale_back(o));
  EXPECT_EQ(o, object());
  EXPECT_FALSE(scale_back(o));
}

TEST(PodTemplates, MissingTemplateIsInvalidInput) {
  Json o = object();
  std::vector<std::string> bad = {"/spec/nope/template/spec"};
  EXPECT_THROW(apply_flavor(o, bad, flavor()), InvalidInput);
}

TEST(Annotations, EditedInPlaceAndTheEmptyMapDropped) {
  Json o = Json::parse(R"({"metadata":{"name":"a"}})");
  mutable_annotations(o)["x"] = "1";
  mutable_annotations(o)["y"] = "2";
  EXPECT_EQ(o["metadata"]["annotations"], Json::parse(R"({"x":"1","y":"2"})"));
  erase_annotation(o, "x");
  EXPECT_EQ(o["metadata"]["annotations"], Json::parse(R"({"y":"2"})"));
  erase_annotation(o, "y");
  EXPECT_FALSE(o["metadata"].contains("annotations"));  // no empty map in the merge patch
}

TEST(Annotations, NothingToEraseChangesNothing) {
  const Json before = Json::parse(R"({"metadata":{"name":"a"}})");
  Json o = before;
  erase_annotation(o, "x");
  EXPECT_EQ(o, before);
  o["metadata"]["annotations"] = {{"y", "2"}};
  erase_annotation(o, "x");
  EXPECT_EQ(o["metadata"]["annotations"], Json::parse(R"({"y":"2"})"));
}

TEST(Annotations, MalformedMetadataIsInvalidInput) {
  Json bad = Json::parse(R"({"metadata":{"name":"a","annotations":["x"]}})");
  EXPECT_THROW(mutable_annotations(bad), InvalidInput);
  EXPECT_THROW(erase_annotation(bad, "x"), InvalidInput);
  Json bad_meta = Json::parse(R"({"metadata":"a"})");
  EXPECT_THROW(mutable_annotations(bad_meta), InvalidInput);
  EXPECT_THROW(erase_annotation(bad_meta, "x"), InvalidInput);
}

}  // namespace
}  // namespace gpuaas::plugin
