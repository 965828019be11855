#include "gpuaas/plugin/pod_set.hpp"

#include <gtest/gtest.h>

#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::plugin {
namespace {

Json tmpl(const char* spec) { return Json::parse(spec); }

TEST(PodSet, LimitsStandInForMissingRequests) {
  auto s = pod_set("w", 3, tmpl(R"({"containers":[{"name":"a","resources":{
      "requests":{"cpu":"500m"},"limits":{"cpu":"2","nvidia.com/gpu":"1","memory":"1Gi"}}}]})"),
                   "/t");
  EXPECT_EQ(s.count(), 3);
  EXPECT_EQ(per_pod_milli(s, "cpu"), 500);  // the request wins over the limit
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 1000);
  EXPECT_EQ(per_pod_milli(s, "memory"), 1024LL * 1024 * 1024 * 1000);
}

TEST(PodSet, SumsContainersAndTakesTheLargestInitContainer) {
  auto s = pod_set("w", 1, tmpl(R"({
      "initContainers":[{"name":"i","resources":{"requests":{"cpu":"4"}}},
                        {"name":"side","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}}],
      "containers":[{"name":"a","resources":{"requests":{"cpu":"1","nvidia.com/gpu":2}}},
                    {"name":"b","resources":{"requests":{"cpu":"1"}}}],
      "overhead":{"cpu":"100m"}})"),
                   "/t");
  // max(1+1 + sidecar 1, init 4) + overhead
  EXPECT_EQ(per_pod_milli(s, "cpu"), 4100);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 2000);
}

TEST(PodSet, KeepsFractionsAndMigProfiles) {
  auto s = pod_set("w", 1, tmpl(R"({"containers":[{"name":"a","resources":{"limits":{
      "nvidia.com/gpu":"0.5","nvidia.com/mig-1g.10gb":1}}}]})"),
                   "/t");
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 500);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/mig-1g.10gb"), 1000);
}

TEST(PodSet, NoResourcesIsAnEmptyPod) {
  auto s = pod_set("w", 2, tmpl(R"({"containers":[{"name":"a"}]})"), "/t");
  EXPECT_EQ(s.per_pod_size(), 0);
}

TEST(PodSet, ErrorsNameThePath) {
  try {
    pod_set("w", 1, tmpl(R"({"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]})"),
            "/spec/template/spec");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "/spec/template/spec/containers/0/resources/limits/cpu: \"lots\" is not a "
                 "resource quantity");
  }
  EXPECT_THROW(pod_set("w", 1, tmpl(R"({"containers":[]})"), "/t"), InvalidInput);
  EXPECT_THROW(pod_set("w", 1, Json::parse(R"({"metadata":{}})"), "/t"), InvalidInput);
  EXPECT_THROW(pod_set("w", 1, Json::parse(R"("spec")"), "/t"), InvalidInput);
  EXPECT_THROW(pod_set("w", 1, tmpl(R"({"containers":{"a":1}})"), "/t"), InvalidInput);
  EXPECT_THROW(pod_set("w", 1, tmpl(R"({"containers":[{"resources":{"limits":{"cpu":-1}}}]})"),
                       "/t"),
               InvalidInput);
}

TEST(PodSet, DemandCarriesKueueLabels) {
  Json o = Json::parse(R"({"apiVersion":"v1","kind":"X","metadata":{"name":"a","labels":{
      "kueue.x-k8s.io/queue-name":"team-a","kueue.x-k8s.io/priority-class":"high"}}})");
  auto d = demand_of(Workload(o));
  EXPECT_EQ(d.queue_name(), "team-a");
  EXPECT_EQ(d.priority_class(), "high");
}

}  // namespace
}  // namespace gpuaas::plugin
