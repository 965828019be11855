// The simulator's kind models against the real plugins, loaded by the real plugin host from the
// build: what a model creates must read back through its plugin as the scenario meant it, the
// plugin's own ADMIT / SUSPEND / SCALE_TO_ZERO patches must open and close the gate the model
// reads, and the status the model writes must give the plugin the same phase back.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/sim/kind_model.hpp"

namespace gpuaas::sim {
namespace {

using core::WorkloadAction;
using nlohmann::json;
using L = v1::WorkloadLifecycle;

constexpr const char* kProduct = "nvidia.com/gpu.product";
constexpr const char* kH100 = "NVIDIA-H100-80GB-HBM3";

// Every test reads plugins through one host: loading checks each library's manifest and checksum.
class KindModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    host_ = std::make_unique<host::PluginHost>();
    const auto refused = host_->load_directory(std::string(GPUAAS_BIN_DIR) + "/../plugins");
    for (const auto& r : refused) ADD_FAILURE() << r.path << ": " << r.reason;
    interpreter_ = std::make_unique<core::PluginInterpreter>(*host_);
  }
  static void TearDownTestSuite() {
    interpreter_.reset();
    host_.reset();
  }

  static WorkloadSpec spec(const std::string& kind, int32_t pods) {
    WorkloadSpec s;
    s.name = "w-" + std::to_string(pods);
    s.namespace_ = "team-a";
    s.queue = "main";
    s.kind = kind;
    s.pods = pods;
    s.priority_class = "high";
    s.annotations["gpuaas.io/deadline"] = "2030-01-01T00:00:00Z";
    return s;
  }

  // The model's object as the daemon would receive it (a resourceVersion, as the API server
  // gives it: the plugins' patches are guarded by it).
  static json make(const KindModel& m, const WorkloadSpec& s) {
    json o = m.make_object(s);
    o["metadata"]["resourceVersion"] = "1";
    return o;
  }

  static core::KubeObject decode(const json& o) {
    core::ObjectDecoder d;
    auto r = d.decode(o.dump());
    EXPECT_TRUE(r.is_ok()) << r.status().message() << "\n" << o.dump();
    return r.is_ok() ? std::move(r.value()) : core::KubeObject{};
  }

  static core::WorkloadView view(const json& o) {
    auto v = interpreter_->interpret(decode(o));
    EXPECT_TRUE(v.has_value()) << "no plugin for " << o.value("kind", "");
    if (!v) return {};
    EXPECT_EQ(v->error, "") << o.dump();
    return *v;
  }

  static L::State state(const json& o) {
    auto v = view(o);
    return v.lifecycle ? v.lifecycle->state() : L::STATE_UNSPECIFIED;
  }

  // The flavor admission chooses: node labels and a toleration, as admission_output fills it.
  static v1::ActionRequest request() {
    v1::ActionRequest r;
    (*r.mutable_node_labels())[kProduct] = kH100;
    r.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})");
    r.set_flavor("h100");
    r.set_reason("test");
    r.mutable_time()->set_seconds(1767225600);
    return r;
  }

  // Applies the plugin's patches for `action`, as the simulator does; returns how many.
  static int act(json& o, WorkloadAction action) {
    auto set = interpreter_->act(decode(o), action, request());
    EXPECT_TRUE(set.is_ok()) << set.status().message();
    if (!set.is_ok()) return 0;
    for (const auto& a : set->actions()) {
      EXPECT_EQ(a.operation(), v1::Action::MERGE_PATCH);
      o.merge_patch(json::parse(a.body_json()));
    }
    return set->actions_size();
  }

  static int64_t gpu_of(const v1::PodSet& set) {
    for (const auto& r : set.per_pod())
      if (r.name() == "nvidia.com/gpu") return r.milli();
    return 0;
  }

  static inline std::unique_ptr<host::PluginHost> host_;
  static inline std::unique_ptr<core::PluginInterpreter> interpreter_;
};

struct Case {
  std::string kind;
  int32_t pods;
  // Pod sets in the plugin's order with their counts; the same pods run once admitted.
  std::vector<std::pair<std::string, int32_t>> sets;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.kind << "/" << c.pods; }

class KindModelLife : public KindModelTest, public ::testing::WithParamInterface<Case> {};

// What each pod set should ask per pod: the head of a Ray cluster is the GPU-less one.
int64_t expected_gpu(const std::string& set) { return set == "head" ? 0 : 1000; }

TEST_P(KindModelLife, FollowsItsPluginFromCreationToSuspension) {
  const Case& c = GetParam();
  const KindModel* m = kind_model(c.kind);
  ASSERT_NE(m, nullptr);
  json o = make(*m, spec(c.kind, c.pods));
  EXPECT_EQ(o["kind"], c.kind);
  EXPECT_EQ(o["apiVersion"], std::string(m->api_version()));

  // Created: demand as the scenario meant it, held back.
  auto v = view(o);
  ASSERT_TRUE(v.demand.has_value());
  EXPECT_EQ(v.demand->queue_name(), "main");
  EXPECT_EQ(v.demand->priority_class(), "high");
  ASSERT_EQ(v.demand->pod_sets_size(), static_cast<int>(c.sets.size())) << v.demand->DebugString();
  for (std::size_t i = 0; i < c.sets.size(); ++i) {
    const auto& ps = v.demand->pod_sets(static_cast<int>(i));
    EXPECT_EQ(ps.name(), c.sets[i].first);
    EXPECT_EQ(ps.count(), c.sets[i].second) << ps.name();
    EXPECT_EQ(gpu_of(ps), expected_gpu(ps.name())) << ps.name();
  }
  EXPECT_EQ(state(o), L::SUSPENDED);
  EXPECT_FALSE(m->admitted(o));
  EXPECT_TRUE(m->pods(o).empty());

  // Admitted: the gate opens, the operator's pods carry the flavor's labels.
  ASSERT_GT(act(o, WorkloadAction::kAdmit), 0);
  EXPECT_TRUE(m->admitted(o)) << o.dump();
  auto pods = m->pods(o);
  ASSERT_EQ(pods.size(), c.sets.size()) << o.dump();
  for (std::size_t i = 0; i < c.sets.size(); ++i) {
    EXPECT_EQ(pods[i].pod_set, c.sets[i].first);
    EXPECT_EQ(pods[i].count, c.sets[i].second) << pods[i].pod_set;
    EXPECT_EQ(pods[i].gpu_milli, expected_gpu(pods[i].pod_set)) << pods[i].pod_set;
    EXPECT_EQ(pods[i].cpu_milli, pods[i].pod_set == "head" ? 2000 : 4000);
    EXPECT_EQ(pods[i].memory_bytes, (pods[i].pod_set == "head" ? int64_t{8} : 16) << 30);
    EXPECT_EQ(pods[i].node_selector, (std::map<std::string, std::string>{{kProduct, kH100}}));
  }
  m->set_phase(o, Phase::kPending);
  EXPECT_EQ(state(o), L::PENDING) << o["status"].dump();
  m->set_phase(o, Phase::kRunning);
  EXPECT_EQ(state(o), L::RUNNING) << o["status"].dump();
  EXPECT_EQ(m->pods(o).size(), c.sets.size());

  // The end of a run, on copies.
  json done = o, failed = o;
  if (m->finishes()) {
    m->set_phase(done, Phase::kSucceeded);
    EXPECT_EQ(state(done), L::SUCCEEDED) << done["status"].dump();
    EXPECT_TRUE(m->pods(done).empty());
    m->set_phase(failed, Phase::kFailed);
    EXPECT_EQ(state(failed), L::FAILED) << failed["status"].dump();
    EXPECT_TRUE(m->pods(failed).empty());
  } else {
    EXPECT_THROW(m->set_phase(done, Phase::kSucceeded), std::invalid_argument);
    m->set_phase(failed, Phase::kFailed);
    // A crash-looping notebook holds its GPU: the plugin keeps it PENDING by design.
    EXPECT_EQ(state(failed), c.kind == "Notebook" ? L::PENDING : L::FAILED)
        << failed["status"].dump();
  }

  // Suspended while running: the gate closes and the pods go.
  ASSERT_GT(act(o, WorkloadAction::kSuspend), 0);
  EXPECT_FALSE(m->admitted(o)) << o.dump();
  EXPECT_TRUE(m->pods(o).empty());
  EXPECT_EQ(state(o), L::SUSPENDED);
  const auto held = view(o);
  ASSERT_TRUE(held.demand.has_value());
  for (const auto& ps : held.demand->pod_sets()) {
    // A Job that ran keeps its template (the API server freezes it; see the batch-job README).
    EXPECT_EQ(ps.node_selector().count(kProduct) == 1, c.kind == "Job") << ps.name();
  }

  // And admitted again to the same flavor.
  ASSERT_GT(act(o, WorkloadAction::kAdmit), 0);
  EXPECT_TRUE(m->admitted(o));
  EXPECT_EQ(m->pods(o).size(), c.sets.size());
}

INSTANTIATE_TEST_SUITE_P(KindModelKinds, KindModelLife,
                         ::testing::Values(Case{"PyTorchJob", 3, {{"master", 1}, {"worker", 2}}},
                                           Case{"PyTorchJob", 1, {{"master", 1}}},
                                           Case{"RayCluster", 2, {{"head", 1}, {"workers", 2}}},
                                           Case{"RayJob", 2, {{"head", 1}, {"workers", 2}}},
                                           Case{"InferenceService", 2, {{"predictor", 2}}},
                                           Case{"Notebook", 1, {{"notebook", 1}}},
                                           Case{"Job", 4, {{"main", 4}}}),
                         [](const auto& p) { return p.param.kind + std::to_string(p.param.pods); });

TEST_F(KindModelTest, RayClusterScaledToZeroKeepsOnlyItsHead) {
  const KindModel& m = *kind_model("RayCluster");
  json o = make(m, spec("RayCluster", 3));
  act(o, WorkloadAction::kAdmit);
  m.set_phase(o, Phase::kRunning);
  ASSERT_GT(act(o, WorkloadAction::kScaleToZero), 0);
  EXPECT_TRUE(m.admitted(o));
  auto pods = m.pods(o);
  ASSERT_EQ(pods.size(), 1u) << o.dump();
  EXPECT_EQ(pods[0].pod_set, "head");
  EXPECT_EQ(pods[0].count, 1);
  ASSERT_GT(act(o, WorkloadAction::kScaleBack), 0);
  pods = m.pods(o);
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[1].count, 3);
}

TEST_F(KindModelTest, RayClusterUnderTheAutoscalerScalesToZeroThroughItsBounds) {
  const KindModel& m = *kind_model("RayCluster");
  json o = make(m, spec("RayCluster", 2));
  o["spec"]["enableInTreeAutoscaling"] = true;
  act(o, WorkloadAction::kAdmit);
  ASSERT_GT(act(o, WorkloadAction::kScaleToZero), 0);
  EXPECT_EQ(o["spec"]["workerGroupSpecs"][0]["replicas"], 2);  // the autoscaler's, untouched
  auto pods = m.pods(o);
  ASSERT_EQ(pods.size(), 1u) << o.dump();
  // KubeRay's autoscaler container runs in the head pod, and the plugin counts it too.
  EXPECT_EQ(pods[0].cpu_milli, 2500);
  const auto v = view(o);
  ASSERT_TRUE(v.demand.has_value());
  for (const auto& r : v.demand->pod_sets(0).per_pod()) {
    if (r.name() == "cpu") {
      EXPECT_EQ(r.milli(), 2500);
    }
  }
}

TEST_F(KindModelTest, InferenceServiceScaledToZeroRunsNoPredictorAndKeepsItsDemand) {
  const KindModel& m = *kind_model("InferenceService");
  json o = make(m, spec("InferenceService", 2));
  act(o, WorkloadAction::kAdmit);
  m.set_phase(o, Phase::kRunning);
  ASSERT_GT(act(o, WorkloadAction::kScaleToZero), 0);
  EXPECT_TRUE(m.admitted(o));
  EXPECT_TRUE(m.pods(o).empty()) << o.dump();
  EXPECT_EQ(state(o), L::RUNNING);  // Knative scaled to zero is still Ready
  EXPECT_EQ(view(o).demand->pod_sets(0).count(), 2);
  ASSERT_GT(act(o, WorkloadAction::kScaleBack), 0);
  ASSERT_EQ(m.pods(o).size(), 1u);
  EXPECT_EQ(m.pods(o)[0].count, 2);
}

TEST_F(KindModelTest, NotebookScaledToZeroIsStoppedToItsController) {
  const KindModel& m = *kind_model("Notebook");
  json o = make(m, spec("Notebook", 1));
  act(o, WorkloadAction::kAdmit);
  m.set_phase(o, Phase::kRunning);
  ASSERT_GT(act(o, WorkloadAction::kScaleToZero), 0);
  EXPECT_FALSE(m.admitted(o));
  EXPECT_TRUE(m.pods(o).empty());
  ASSERT_GT(act(o, WorkloadAction::kScaleBack), 0);
  EXPECT_TRUE(m.admitted(o));
  EXPECT_EQ(m.pods(o).size(), 1u);
}

// gpuaas's idle reclaim: the simulator tells a scaled object from a suspended or stopped one by
// the plugin's gpuaas.io/scaled-from record, and the scaled one runs no GPU pods until SCALE_BACK.
TEST_F(KindModelTest, ScaledObjectsRunNoGpuPodsUntilScaledBack) {
  struct Kind {
    std::string kind;
    int32_t pods;
    std::set<std::string> at_zero;  // pod sets still running at zero
  };
  for (const Kind& k : {Kind{"RayCluster", 3, {"head"}}, Kind{"InferenceService", 2, {}},
                        Kind{"Notebook", 1, {}}}) {
    SCOPED_TRACE(k.kind);
    const KindModel& m = *kind_model(k.kind);
    WorkloadSpec s = spec(k.kind, k.pods);
    // gpuaas's serving runs put services in Standard mode (Serverless is Knative's to scale).
    if (k.kind == "InferenceService")
      s.annotations["serving.kserve.io/deploymentMode"] = "RawDeployment";
    json o = make(m, s);
    act(o, WorkloadAction::kAdmit);
    m.set_phase(o, Phase::kRunning);
    const auto running = m.pods(o);
    EXPECT_FALSE(scaled_to_zero(o));
    ASSERT_GT(act(o, WorkloadAction::kScaleToZero), 0);
    EXPECT_TRUE(scaled_to_zero(o)) << o.dump();
    std::set<std::string> sets;
    for (const auto& p : m.pods(o)) {
      sets.insert(p.pod_set);
      EXPECT_EQ(p.gpu_milli, 0) << p.pod_set;
    }
    EXPECT_EQ(sets, k.at_zero) << o.dump();
    ASSERT_GT(act(o, WorkloadAction::kScaleBack), 0);
    EXPECT_FALSE(scaled_to_zero(o)) << o.dump();
    EXPECT_TRUE(m.admitted(o));
    const auto back = m.pods(o);
    ASSERT_EQ(back.size(), running.size());
    for (std::size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].pod_set, running[i].pod_set);
      EXPECT_EQ(back[i].count, running[i].count);
    }
  }
}

TEST_F(KindModelTest, InferenceServiceInStandardModeIsStoppedWhenScaled) {
  const KindModel& m = *kind_model("InferenceService");
  WorkloadSpec s = spec("InferenceService", 1);
  s.annotations["serving.kserve.io/deploymentMode"] = "RawDeployment";
  json o = make(m, s);
  act(o, WorkloadAction::kAdmit);
  ASSERT_GT(act(o, WorkloadAction::kScaleToZero), 0);
  EXPECT_EQ(o["metadata"]["annotations"].value("serving.kserve.io/stop", ""), "true") << o.dump();
  EXPECT_EQ(o["spec"]["predictor"].value("minReplicas", -1), 1);  // KServe's stop, not Knative's
  EXPECT_FALSE(m.admitted(o));
  EXPECT_TRUE(m.pods(o).empty());
}

TEST_F(KindModelTest, SuspendedIsNotScaled) {
  for (const char* kind : {"RayCluster", "InferenceService", "Notebook"}) {
    SCOPED_TRACE(kind);
    const KindModel& m = *kind_model(kind);
    json o = make(m, spec(kind, 1));
    act(o, WorkloadAction::kAdmit);
    ASSERT_GT(act(o, WorkloadAction::kSuspend), 0);
    EXPECT_FALSE(scaled_to_zero(o)) << o.dump();
    EXPECT_TRUE(m.pods(o).empty());
  }
}

TEST_F(KindModelTest, FractionalGpuRoundTripsThroughDemandAndPods) {
  for (const auto& kind : known_kinds()) {
    SCOPED_TRACE(kind);
    const KindModel& m = *kind_model(kind);
    WorkloadSpec s = spec(kind, 1);
    s.gpu_milli_per_pod = 500;
    json o = make(m, s);
    EXPECT_NE(o.dump().find(R"("nvidia.com/gpu":"500m")"), std::string::npos);
    auto v = view(o);
    ASSERT_TRUE(v.demand.has_value());
    const auto& sets = v.demand->pod_sets();
    const auto& gpu_set = sets[sets.size() - 1];  // the head comes first in Ray kinds
    EXPECT_EQ(gpu_of(gpu_set), 500) << gpu_set.name();
    act(o, WorkloadAction::kAdmit);
    auto pods = m.pods(o);
    ASSERT_FALSE(pods.empty());
    EXPECT_EQ(pods.back().gpu_milli, 500);
  }
}

TEST_F(KindModelTest, LabelsAndAnnotationsAreTheScenarios) {
  for (const auto& kind : known_kinds()) {
    SCOPED_TRACE(kind);
    WorkloadSpec s = spec(kind, 1);
    s.priority_class.clear();
    json o = make(*kind_model(kind), s);
    EXPECT_EQ(o["metadata"]["name"], "w-1");
    EXPECT_EQ(o["metadata"]["namespace"], "team-a");
    EXPECT_EQ(o["metadata"]["labels"], (json{{"kueue.x-k8s.io/queue-name", "main"}}));
    EXPECT_EQ(o["metadata"]["annotations"]["gpuaas.io/deadline"], "2030-01-01T00:00:00Z");
    EXPECT_FALSE(o["metadata"].contains("creationTimestamp"));
    EXPECT_EQ(view(o).demand->priority_class(), "");
  }
}

TEST_F(KindModelTest, RayClusterWithoutWorkersIsItsHead) {
  const KindModel& m = *kind_model("RayCluster");
  json o = make(m, spec("RayCluster", 0));
  act(o, WorkloadAction::kAdmit);
  auto pods = m.pods(o);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].pod_set, "head");
}

TEST(KindModel, KnowsItsKindsAndNoOthers) {
  const auto kinds = known_kinds();
  EXPECT_EQ(std::set<std::string>(kinds.begin(), kinds.end()),
            (std::set<std::string>{"PyTorchJob", "RayCluster", "RayJob", "InferenceService",
                                   "Notebook", "Job"}));
  for (const auto& k : kinds) EXPECT_EQ(kind_model(k)->kind(), k);
  EXPECT_EQ(kind_model("Deployment"), nullptr);
  EXPECT_EQ(kind_model("pytorchjob"), nullptr);
  EXPECT_EQ(kind_model(""), nullptr);
}

TEST(KindModel, RefusesPodCountsTheKindCannotRun) {
  WorkloadSpec s;
  s.name = "x";
  s.namespace_ = "team-a";
  s.kind = "Notebook";
  s.pods = 2;
  EXPECT_THROW(kind_model("Notebook")->make_object(s), std::invalid_argument);
  s.kind = "PyTorchJob";
  s.pods = 0;
  EXPECT_THROW(kind_model("PyTorchJob")->make_object(s), std::invalid_argument);
  s.kind = "Job";
  EXPECT_THROW(kind_model("Job")->make_object(s), std::invalid_argument);
}

}  // namespace
}  // namespace gpuaas::sim
