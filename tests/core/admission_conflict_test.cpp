// An admission patch that meets a 409 (the object changed after gpuaasd decided, e.g. a status
// annotation or an operator's update) is reported back by the applier as an ActionResult. The
// decision stands, so gpuaasd patches the same admission again onto the newer object, once it has
// seen it, and never while the model still holds the version that conflicted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/daemon_driver.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using Time = sim::Time;

// One ClusterQueue of 4 GPUs whose urgent work may preempt routine work.
constexpr const char* kPolicy = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: l40s}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-L40S}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: batch}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: l40s
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: batch}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: routine}
value: 100
)";

json node() {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "l40s-1"}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-L40S"}}}}},
      {"status",
       {{"capacity", {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}}},
        {"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json job(const std::string& rv, bool annotated = false) {
  json j = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", "train"},
        {"namespace", "team-a"},
        {"uid", "uid-train"},
        {"resourceVersion", rv},
        {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
      {"spec",
       {{"suspend", true},
        {"parallelism", 1},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers", json::array({{{"name", "main"},
                                         {"image", "trainer"},
                                         {"resources",
                                          {{"requests", {{"cpu", "4"}, {"nvidia.com/gpu", "2"}}},
                                           {"limits", {{"nvidia.com/gpu", "2"}}}}}}})}}}}}}}};
  if (annotated) j["metadata"]["annotations"]["gpuaas.io/status"] = "{\"state\":\"Admitted\"}";
  return j;
}

v1::ActionResult conflict(const v1::Action& a, const std::string& rv) {
  v1::ActionResult r;
  *r.mutable_target() = a.target();
  r.set_decision_id(a.decision_id());
  r.set_rule(a.rule());
  r.set_outcome(v1::ActionResult::CONFLICT);
  r.set_http_status(409);
  r.set_resource_version(rv);
  return r;
}

std::string rv_of(const v1::Action& a) {
  auto body = json::parse(a.body_json());
  return body["metadata"].value("resourceVersion", "");
}

class AdmissionConflictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::DaemonDriver::Options o;
    o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
    o.subject_root = "conflict" + std::to_string(++runs_);
    auto d = sim::DaemonDriver::start(o);
    ASSERT_TRUE(d) << d.status().message();
    driver_ = std::move(d).value();
    auto p = sim::policy_set_json({{"policy.yaml", kPolicy}});
    ASSERT_TRUE(p) << p.status().message();
    driver_->object(sim::Change::kAdded, json::parse(*p), now_);
    driver_->object(sim::Change::kAdded, node(), now_);
    ASSERT_TRUE(driver_->settle());
  }
  std::vector<v1::Action> settle() {
    auto r = driver_->settle();
    EXPECT_TRUE(r) << r.status().message();
    return r ? *r : std::vector<v1::Action>{};
  }
  Time later() { return now_ += std::chrono::seconds(1); }

  Time now_{std::chrono::milliseconds(1'800'000'000'000)};
  std::unique_ptr<sim::DaemonDriver> driver_;
  static inline int runs_ = 0;
};

TEST_F(AdmissionConflictTest, ConflictedAdmissionIsPatchedAgainOnTheNewerObject) {
  driver_->object(sim::Change::kAdded, job("10"), later());
  auto first = settle();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].rule(), "admission/quota");
  EXPECT_EQ(rv_of(first[0]), "10");

  // The result arrives before the newer version does: patching again now would conflict again.
  driver_->action_result(conflict(first[0], "10"), later());
  EXPECT_TRUE(settle().empty());

  // The object as it now is (someone annotated it): the admission again, at its version.
  driver_->object(sim::Change::kModified, job("11", true), later());
  auto again = settle();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].rule(), "admission/quota");
  EXPECT_EQ(rv_of(again[0]), "11");
  EXPECT_EQ(json::parse(again[0].body_json())["spec"]["suspend"], false);
  EXPECT_NE(again[0].decision_id(), first[0].decision_id());

  // Once: the next change of the object does not patch a third time.
  driver_->object(sim::Change::kModified, job("12", true), later());
  EXPECT_TRUE(settle().empty());
}

TEST_F(AdmissionConflictTest, ResultAfterTheNewerVersionPatchesAtOnce) {
  driver_->object(sim::Change::kAdded, job("20"), later());
  auto first = settle();
  ASSERT_EQ(first.size(), 1u);
  driver_->object(sim::Change::kModified, job("21", true), later());
  EXPECT_TRUE(settle().empty());
  driver_->action_result(conflict(first[0], "20"), later());
  auto again = settle();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(rv_of(again[0]), "21");
}

TEST_F(AdmissionConflictTest, OtherOutcomesAndRulesChangeNothing) {
  driver_->object(sim::Change::kAdded, job("30"), later());
  auto first = settle();
  ASSERT_EQ(first.size(), 1u);
  auto applied = conflict(first[0], "30");
  applied.set_outcome(v1::ActionResult::APPLIED);
  driver_->action_result(applied, later());
  driver_->object(sim::Change::kModified, job("31", true), later());
  EXPECT_TRUE(settle().empty());
  auto other = conflict(first[0], "31");
  other.set_rule("reclaim/idle");
  driver_->action_result(other, later());
  driver_->object(sim::Change::kModified, job("32", true), later());
  EXPECT_TRUE(settle().empty());
  EXPECT_EQ(driver_->deadlettered(), 0u);
}

// A preemption (suspend) that meets a conflict: the victim's quota was given to the preemptor, so
// it must stop; the suspend is patched again onto the newer object.
TEST_F(AdmissionConflictTest, ConflictedPreemptionIsPatchedAgain) {
  auto victim = [](const std::string& rv, bool running) {
    json j = job(rv);
    j["metadata"]["name"] = "routine-job";
    j["metadata"]["uid"] = "uid-routine";
    j["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "routine";
    j["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "4";
    j["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "4";
    if (running) {
      j["spec"]["suspend"] = false;
      j["status"]["active"] = 1;
    }
    return j;
  };
  driver_->object(sim::Change::kAdded, victim("40", false), later());
  auto admitted = settle();
  ASSERT_EQ(admitted.size(), 1u);
  driver_->object(sim::Change::kModified, victim("41", true), later());  // it runs
  (void)settle();

  json urgent = job("50");
  urgent["metadata"]["name"] = "urgent-job";
  urgent["metadata"]["uid"] = "uid-urgent";
  urgent["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent";
  driver_->object(sim::Change::kAdded, urgent, later());
  auto preempted = settle();
  const v1::Action* suspend = nullptr;
  for (const auto& a : preempted)
    if (a.target().name() == "routine-job") suspend = &a;
  ASSERT_NE(suspend, nullptr);
  ASSERT_EQ(suspend->rule().rfind("preemption/", 0), 0u) << suspend->rule();
  EXPECT_EQ(rv_of(*suspend), "41");

  driver_->action_result(conflict(*suspend, "41"), later());
  EXPECT_TRUE(settle().empty());
  // The job changed meanwhile (still running): the suspend again, at its new version.
  auto changed = victim("42", true);
  changed["metadata"]["annotations"]["note"] = "edited";
  driver_->object(sim::Change::kModified, changed, later());
  auto again = settle();
  const v1::Action* resuspend = nullptr;
  for (const auto& a : again)
    if (a.target().name() == "routine-job") resuspend = &a;
  ASSERT_NE(resuspend, nullptr) << again.size() << " actions";
  EXPECT_EQ(resuspend->rule(), suspend->rule());
  EXPECT_EQ(rv_of(*resuspend), "42");
  EXPECT_EQ(json::parse(resuspend->body_json())["spec"]["suspend"], true);
}

}  // namespace
}  // namespace gpuaas::core
