// Demand edge cases: resources as Kubernetes computes them, and malformed objects.
#include "support.hpp"

namespace workbench_test {
namespace {

v1::PodSet one_set(FakeHost& host, const Json& nb) {
  auto d = host.demand(nb.dump());
  EXPECT_EQ(d.pod_sets_size(), 1);
  return d.pod_sets(0);
}

// The message of an InvalidInput, or a test failure.
std::string invalid(FakeHost& host, const std::string& object) {
  try {
    host.demand(object);
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << object;
  return {};
}

TEST(WorkbenchDemand, DescriptorNamesBothVersionsAndEveryCapability) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(host.summary(),
            "workbench 0.1.0 stable abi 1.3 gpuaas.v1 | kubeflow.org/v1 Notebook, "
            "kubeflow.org/v1beta1 Notebook | demand lifecycle admission scale-to-zero activity");
}

TEST(WorkbenchDemand, QueueAndPriorityFromKueueLabels) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = with_resources({{"limits", {{"nvidia.com/gpu", "1"}}}});
  nb["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "team-a-queue"},
                              {"kueue.x-k8s.io/priority-class", "interactive"}};
  auto d = host.demand(nb.dump());
  EXPECT_EQ(d.queue_name(), "team-a-queue");
  EXPECT_EQ(d.priority_class(), "interactive");
  EXPECT_EQ(milli(d.pod_sets(0), "nvidia.com/gpu"), 1000);
}

TEST(WorkbenchDemand, NoGpuAndNoResources) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto set = one_set(host, notebook({{"containers", {{{"name", "nb"}}}}}));
  EXPECT_EQ(set.count(), 1);
  EXPECT_EQ(set.per_pod_size(), 0);
  set = one_set(host, with_resources(Json::object()));
  EXPECT_EQ(set.per_pod_size(), 0);
}

TEST(WorkbenchDemand, RequestsWithoutLimitsAndLimitsWithoutRequests) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto set = one_set(host, with_resources({{"requests", {{"cpu", "2"}, {"memory", "4Gi"}}}}));
  EXPECT_EQ(milli(set, "cpu"), 2000);
  EXPECT_EQ(milli(set, "memory"), 4LL * 1024 * 1024 * 1024 * 1000);
  // A limit alone is the request (API server defaulting); a request beside it wins.
  set = one_set(host, with_resources({{"limits", {{"nvidia.com/gpu", 2}, {"cpu", "4"}}},
                                      {"requests", {{"cpu", "1500m"}}}}));
  EXPECT_EQ(milli(set, "nvidia.com/gpu"), 2000);
  EXPECT_EQ(milli(set, "cpu"), 1500);
}

TEST(WorkbenchDemand, FractionalAndMigGpus) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto set = one_set(host, with_resources({{"limits", {{"nvidia.com/gpu", "0.5"}}}}));
  EXPECT_EQ(milli(set, "nvidia.com/gpu"), 500);
  set = one_set(host, with_resources({{"limits", {{"nvidia.com/mig-1g.10gb", "1"}}}}));
  EXPECT_EQ(milli(set, "nvidia.com/mig-1g.10gb"), 1000);
  EXPECT_EQ(milli(set, "nvidia.com/gpu"), 0);
}

TEST(WorkbenchDemand, SidecarsInitContainersAndOverhead) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json spec = {
      {"containers",
       {{{"name", "nb"}, {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}},
        {{"name", "oauth-proxy"}, {"resources", {{"requests", {{"cpu", "100m"}}}}}}}},
      {"initContainers", {{{"name", "fetch"}, {"resources", {{"requests", {{"cpu", "3"}}}}}}}},
      {"overhead", {{"cpu", "250m"}}}};
  auto set = one_set(host, notebook(spec));
  EXPECT_EQ(milli(set, "cpu"), 3000 + 250);  // the init container's peak, plus the overhead
  EXPECT_EQ(milli(set, "nvidia.com/gpu"), 1000);
}

TEST(WorkbenchDemand, NodeSelectorOfTheTemplate) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = with_resources({{"limits", {{"nvidia.com/gpu", "1"}}}});
  nb["spec"]["template"]["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-A100"}};
  EXPECT_EQ(one_set(host, nb).node_selector().at("nvidia.com/gpu.product"), "NVIDIA-A100");
}

TEST(WorkbenchDemand, MissingTemplateOrContainers) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = notebook(Json::object());
  nb["spec"].erase("template");
  EXPECT_EQ(invalid(host, nb.dump()), "/spec/template/spec: missing");
  nb["spec"]["template"] = Json::object();
  EXPECT_EQ(invalid(host, nb.dump()), "/spec/template/spec: missing");
  EXPECT_EQ(invalid(host, notebook(Json::object()).dump()),
            "/spec/template/spec/containers: missing or empty");
  EXPECT_EQ(invalid(host, notebook({{"containers", Json::array()}}).dump()),
            "/spec/template/spec/containers: missing or empty");
}

TEST(WorkbenchDemand, WrongTypes) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  EXPECT_EQ(invalid(host, notebook("a string").dump()), "/spec/template/spec: not an object");
  EXPECT_EQ(invalid(host, notebook({{"containers", {{"name", "nb"}}}}).dump()),
            "/spec/template/spec/containers: not a list");
  std::string msg =
      invalid(host, with_resources({{"limits", {{"nvidia.com/gpu", "lots"}}}}).dump());
  EXPECT_NE(msg.find("/spec/template/spec/containers/0/resources/limits/nvidia.com/gpu"),
            std::string::npos)
      << msg;
  msg = invalid(host, with_resources({{"limits", {{"nvidia.com/gpu", -1}}}}).dump());
  EXPECT_NE(msg.find("nvidia.com/gpu"), std::string::npos) << msg;
  EXPECT_EQ(invalid(host, with_resources({{"limits", "1"}}).dump()),
            "/spec/template/spec/containers/0/resources/limits: not an object");
}

TEST(WorkbenchDemand, MalformedJsonAndNotANotebook) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  std::string msg = invalid(host, R"({"apiVersion": )");
  EXPECT_NE(msg.find("JSON"), std::string::npos) << msg;
  invalid(host, "[]");
  EXPECT_EQ(invalid(host, R"({"apiVersion":"kubeflow.org/v1","kind":"Notebook"})"),
            "/metadata/name: missing");
}

TEST(WorkbenchDemand, UnknownOrBadConfigIsRefused) {
  EXPECT_NO_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 12.5})"));
  EXPECT_NO_THROW(FakeHost(gpuaas_plugin_get_descriptor, "{}"));
  for (const char* bad :
       {R"({"gpu_util_treshold": 5})", R"({"gpu_util_threshold": "5"})",
        R"({"gpu_util_threshold": 101})", R"({"gpu_util_threshold": -1})", "[1]", "{oops"}) {
    try {
      FakeHost host(gpuaas_plugin_get_descriptor, bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT) << bad;
    }
  }
}

}  // namespace
}  // namespace workbench_test
