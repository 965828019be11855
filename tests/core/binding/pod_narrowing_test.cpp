// Narrowing a gated pod to one node within what Kubernetes lets a gated pod change.
#include "binding/pod_narrowing.hpp"

#include <gtest/gtest.h>

namespace gpuaas::core::binding {
namespace {

using nlohmann::json;

json pod(json spec) { return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", std::move(spec)}}; }

json required(json terms) {
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms", std::move(terms)}}}}}};
}

json term(const std::string& key, const std::string& op, json values) {
  return {{"matchExpressions",
           json::array({{{"key", key}, {"operator", op}, {"values", std::move(values)}}})}};
}

const json kHostIn = {
    {"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", json::array({"host-a"})}};

TEST(PodNarrowingTest, APodWithoutAffinityGainsAHostnameSelectorKey) {
  const auto n = narrow_to_node(pod({{"nodeSelector", {{"zone", "z1"}}}}), "host-a", "node-a");
  EXPECT_TRUE(n.refused.empty());
  // Only the new key: a merge patch keeps the pod's own keys.
  EXPECT_EQ(n.spec, (json{{"nodeSelector", {{"kubernetes.io/hostname", "host-a"}}}}));
}

TEST(PodNarrowingTest, EveryRequiredTermGainsTheRequirement) {
  const json terms = json::array({term("zone", "In", {"z1"}), term("gpu", "Exists", json())});
  const auto n = narrow_to_node(pod({{"affinity", required(terms)}}), "host-a", "node-a");
  ASSERT_TRUE(n.refused.empty()) << n.refused;
  const json& out = n.spec["affinity"]["nodeAffinity"]
                          ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(out.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(out[i]["matchExpressions"].size(), 2u);
    EXPECT_EQ(out[i]["matchExpressions"][0], terms[i]["matchExpressions"][0]) << "kept";
    EXPECT_EQ(out[i]["matchExpressions"][1], kHostIn);
  }
  EXPECT_FALSE(n.spec.contains("nodeSelector")) << "no selector key beside the affinity";
}

TEST(PodNarrowingTest, APodPinnedToAnotherHostIsRefused) {
  auto n = narrow_to_node(pod({{"nodeSelector", {{"kubernetes.io/hostname", "host-b"}}}}), "host-a",
                          "node-a");
  EXPECT_NE(n.refused.find("host-b"), std::string::npos) << n.refused;
  n = narrow_to_node(
      pod({{"affinity",
            required(json::array({term("kubernetes.io/hostname", "In", {"host-b"})}))}}),
      "host-a", "node-a");
  EXPECT_NE(n.refused.find("allows no node"), std::string::npos) << n.refused;
  n = narrow_to_node(
      pod({{"affinity",
            required(json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                                 {"operator", "NotIn"},
                                                                 {"values", {"node-a"}}}})}}}))}}),
      "host-a", "node-a");
  EXPECT_FALSE(n.refused.empty());
}

TEST(PodNarrowingTest, OneTermThatAllowsTheHostIsEnough) {
  const json terms = json::array({term("kubernetes.io/hostname", "In", {"host-b"}),
                                  term("kubernetes.io/hostname", "NotIn", {"host-c"})});
  const auto n = narrow_to_node(pod({{"affinity", required(terms)}}), "host-a", "node-a");
  EXPECT_TRUE(n.refused.empty()) << n.refused;
}

TEST(PodNarrowingTest, AnAlreadyNarrowedPodNeedsNothing) {
  EXPECT_TRUE(narrow_to_node(pod({{"nodeSelector", {{"kubernetes.io/hostname", "host-a"}}}}),
                             "host-a", "node-a")
                  .spec.empty());
  const json terms = json::array({{{"matchExpressions", json::array({kHostIn})}}});
  EXPECT_TRUE(
      narrow_to_node(pod({{"affinity", required(terms)}}), "host-a", "node-a").spec.empty());
}

TEST(PodNarrowingTest, MalformedSelectionIsRefusedNotThrown) {
  const json bad = json::array({{{"matchExpressions", json::array({{{"key", 7}}})}}});
  const auto n = narrow_to_node(pod({{"affinity", required(bad)}}), "host-a", "node-a");
  EXPECT_FALSE(n.refused.empty());
  EXPECT_NO_THROW(narrow_to_node(json::array(), "host-a", "node-a"));
}

}  // namespace
}  // namespace gpuaas::core::binding
