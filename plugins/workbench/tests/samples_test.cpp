// Every published Notebook sample (Kubeflow and OpenDataHub): demand, lifecycle and actions.
#include <cctype>

#include "support.hpp"

namespace workbench_test {
namespace {

struct Sample {
  const char* file;
  const char* name;
  const char* api_version;
  int64_t cpu_milli;
  int64_t memory_milli;
};

// Numbers from the YAML: only jupyter_test.yaml requests anything (500m cpu, 1Gi memory).
const Sample kSamples[] = {
    {"kubeflow-notebook/_v1_notebook.yaml", "notebook-sample-v1", "kubeflow.org/v1", 0, 0},
    {"kubeflow-notebook/_v1beta1_notebook.yaml", "notebook-sample-v1beta1", "kubeflow.org/v1beta1",
     0, 0},
    {"odh-kubeflow/_v1_notebook.yaml", "notebook-sample-v1", "kubeflow.org/v1", 0, 0},
    {"odh-kubeflow/jupyter_test.yaml", "jupyter-test", "kubeflow.org/v1", 500, 1073741824LL * 1000},
};

class WorkbenchSamples : public ::testing::TestWithParam<Sample> {};

TEST_P(WorkbenchSamples, Demand) {
  const Sample& s = GetParam();
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = sample(s.file);
  EXPECT_EQ(nb["metadata"]["name"], s.name);
  EXPECT_EQ(nb["apiVersion"], s.api_version);
  auto d = host.demand(nb.dump());
  EXPECT_EQ(d.queue_name(), "");
  EXPECT_EQ(d.priority_class(), "");
  ASSERT_EQ(d.pod_sets_size(), 1);
  const auto& set = d.pod_sets(0);
  EXPECT_EQ(set.name(), "notebook");
  EXPECT_EQ(set.count(), 1);
  EXPECT_EQ(set.min_count(), 0);
  EXPECT_EQ(milli(set, "cpu"), s.cpu_milli);
  EXPECT_EQ(milli(set, "memory"), s.memory_milli);
  EXPECT_EQ(milli(set, "nvidia.com/gpu"), 0);  // the samples request no GPU
  EXPECT_EQ(set.per_pod_size(), s.cpu_milli > 0 ? 2 : 0);
  EXPECT_TRUE(set.node_selector().empty());
}

TEST_P(WorkbenchSamples, LifecycleAsPublishedAndStopped) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = sample(GetParam().file);
  auto l = host.lifecycle(nb.dump());
  EXPECT_EQ(l.state(), v1::WorkloadLifecycle::PENDING);  // no status yet
  EXPECT_EQ(l.reason(), "waiting for the notebook pod");
  nb["metadata"]["annotations"]["kubeflow-resource-stopped"] = "2025-11-29T18:00:00Z";
  EXPECT_EQ(host.lifecycle(nb.dump()).state(), v1::WorkloadLifecycle::SUSPENDED);
}

// Held (stopped) as the daemon keeps it before admission; admit, then suspend, gives it back.
TEST_P(WorkbenchSamples, AdmitThenSuspendRoundTrip) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json held = sample(GetParam().file);
  held["metadata"]["resourceVersion"] = "5";
  held["metadata"]["annotations"]["kubeflow-resource-stopped"] = "2025-11-29T18:00:00Z";

  auto admit = host.action(GPUAAS_ACTION_ADMIT, held.dump(), flavor_request());
  Json b = body(admit);
  EXPECT_EQ(b["metadata"]["resourceVersion"], "5");
  EXPECT_TRUE(b["metadata"]["annotations"]["kubeflow-resource-stopped"].is_null());
  EXPECT_TRUE(b["metadata"]["annotations"].contains("kubeflow-resource-stopped"));
  EXPECT_EQ(b["metadata"]["annotations"]["gpuaas.io/flavor"], "a100");
  EXPECT_EQ(b["spec"]["template"]["spec"]["nodeSelector"]["gpu.pool"], "a100");
  EXPECT_EQ(b["spec"]["template"]["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");

  Json running = apply(host, held, admit, "6");
  EXPECT_FALSE(running["metadata"]["annotations"].contains("kubeflow-resource-stopped"));
  EXPECT_EQ(host.lifecycle(running.dump()).state(), v1::WorkloadLifecycle::PENDING);
  EXPECT_EQ(host.demand(running.dump()).pod_sets(0).node_selector().at("gpu.pool"), "a100");
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, running.dump(), flavor_request()).actions_size(), 0);

  // The event time of the suspension is the stop time written.
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, running.dump(), at(1764439200));
  EXPECT_EQ(body(suspend)["metadata"]["resourceVersion"], "6");
  Json back = apply(host, running, suspend, "5");
  EXPECT_EQ(back, held);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, back.dump(), at(1764439999)).actions_size(), 0);
}

TEST_P(WorkbenchSamples, ScaleToZeroAndBack) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json nb = sample(GetParam().file);
  nb["metadata"]["resourceVersion"] = "9";
  auto down = host.action(GPUAAS_ACTION_SCALE_TO_ZERO, nb.dump(), at(1764439200));
  EXPECT_EQ(body(down)["metadata"]["annotations"]["kubeflow-resource-stopped"],
            "2025-11-29T18:00:00Z");
  Json stopped = apply(host, nb, down, "10");
  EXPECT_EQ(host.lifecycle(stopped.dump()).state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, stopped.dump(), at(1764440000)).actions_size(),
            0);
  auto up = host.action(GPUAAS_ACTION_SCALE_BACK, stopped.dump());
  EXPECT_EQ(body(up)["metadata"]["resourceVersion"], "10");
  EXPECT_EQ(apply(host, stopped, up, "9"), nb);
}

INSTANTIATE_TEST_SUITE_P(Published, WorkbenchSamples, ::testing::ValuesIn(kSamples),
                         [](const auto& p) {
                           std::string n = p.param.file;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(WorkbenchSampleFiles, EachHoldsOneNotebook) {
  // The four files `grep -l "kind: Notebook" -r manifests` finds; each holds one Notebook.
  for (const auto& s : kSamples) {
    EXPECT_EQ(gpuaas::plugin::testing::load_manifests(manifest(s.file)).size(), 1u) << s.file;
  }
}

}  // namespace
}  // namespace workbench_test
