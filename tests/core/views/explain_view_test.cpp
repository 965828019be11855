// `gpuaasctl explain` of an admitted workload whose pods binding cannot open, through gpuaasd
// (in-process bus) with the real plugins: the answer names each pod that stays gated, its
// planned node and why; pods that opened are not listed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../binding/binding_objects.hpp"
#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/daemon_driver.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using Time = sim::Time;
using namespace binding_objects;

// A plain Pod whose required node affinity pins it to a host no plan gives it (admission does
// not read required affinity; a nodeSelector would keep it from being admitted at all).
json pinned_pod(const std::string& name) {
  json p = plain_pod(name, 1);
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
   ["nodeSelectorTerms"] =
       json::array({{{"matchExpressions", json::array({{{"key", "kubernetes.io/hostname"},
                                                        {"operator", "In"},
                                                        {"values", {"elsewhere"}}}})}}});
  return p;
}

class ExplainBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::DaemonDriver::Options o;
    o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
    o.subject_root = "explainbinding" + std::to_string(++runs_);
    auto d = sim::DaemonDriver::start(o);
    ASSERT_TRUE(d) << d.status().message();
    driver_ = std::move(d).value();
    auto p = sim::policy_set_json({{"policy.yaml", policy()}});
    ASSERT_TRUE(p) << p.status().message();
    driver_->object(sim::Change::kAdded, json::parse(*p), now_);
    driver_->object(sim::Change::kAdded, node("a", 8), now_);
    driver_->object(sim::Change::kAdded, node("b", 8), now_);
    ASSERT_TRUE(driver_->settle());
  }
  void add(const json& object) {
    driver_->object(sim::Change::kAdded, object, now_ += std::chrono::seconds(1));
    auto r = driver_->settle();
    ASSERT_TRUE(r) << r.status().message();
  }
  json explain(const std::string& w) { return json::parse(driver_->explain_json(w)); }

  Time now_{std::chrono::milliseconds(1'800'000'000'000)};
  std::unique_ptr<sim::DaemonDriver> driver_;
  static inline int runs_ = 0;
};

TEST_F(ExplainBindingTest, APlainPodPinnedElsewhereIsAdmittedAndSaysWhyItStaysGated) {
  add(pinned_pod("pinned"));
  const json x = explain("research/pinned");
  ASSERT_EQ(x["state"], "Admitted") << x.dump();
  EXPECT_EQ(x["held_by"], "binding") << x.dump();
  ASSERT_TRUE(x.contains("binding")) << x.dump();
  const json& refused = x["binding"]["refused"];
  ASSERT_EQ(refused.size(), 1u) << x.dump();
  EXPECT_EQ(refused[0]["pod"], "research/pinned");
  const std::string node =
      refused[0]["node"].is_string() ? refused[0]["node"].get<std::string>() : "";
  EXPECT_TRUE(node == "a" || node == "b") << x.dump();
  EXPECT_NE(refused[0]["reason"].get<std::string>().find("allows no node"), std::string::npos)
      << x.dump();
  EXPECT_NE(x["message"].get<std::string>().find("pod research/pinned stays gated"),
            std::string::npos)
      << x.dump();
}

TEST_F(ExplainBindingTest, OnlyTheGangsPodThatCannotBeBoundIsNamed) {
  add(pytorchjob("train", 1, 4));
  add(job_pod("train", "master", 0, 4, {}));
  json pinned = job_pod("train", "worker", 0, 4, {});
  pinned["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "elsewhere"}};
  add(pinned);  // the gang is complete: the master opens, the worker stays gated
  const json x = explain("research/train");
  ASSERT_EQ(x["state"], "Admitted") << x.dump();
  EXPECT_EQ(x["held_by"], "binding");
  const json& refused = x["binding"]["refused"];
  ASSERT_EQ(refused.size(), 1u) << x.dump();
  EXPECT_EQ(refused[0]["pod"], "research/train-worker-0");
  EXPECT_TRUE(refused[0]["node"].is_string()) << x.dump();
  EXPECT_NE(refused[0]["reason"].get<std::string>().find("elsewhere"), std::string::npos);
}

TEST_F(ExplainBindingTest, AGangWaitingForItsPodsSaysHowManyAreMissing) {
  add(pytorchjob("gang", 3, 4));
  add(job_pod("gang", "master", 0, 4, {}));
  add(job_pod("gang", "worker", 0, 4, {}));
  const json x = explain("research/gang");
  ASSERT_EQ(x["state"], "Admitted") << x.dump();
  EXPECT_EQ(x["held_by"], "binding") << x.dump();
  EXPECT_EQ(x["binding"]["waiting"], json({{"pods", 2}, {"of", 4}})) << x.dump();
  EXPECT_NE(x["message"].get<std::string>().find("waiting for 2 of 4 pods"), std::string::npos)
      << x.dump();
}

TEST_F(ExplainBindingTest, AnAdmittedWorkloadWhosePodsAllOpenedHasNoBindingPart) {
  add(pytorchjob("fine", 1, 4));
  add(job_pod("fine", "master", 0, 4, {}));
  add(job_pod("fine", "worker", 0, 4, {}));
  const json x = explain("research/fine");
  ASSERT_EQ(x["state"], "Admitted") << x.dump();
  EXPECT_FALSE(x.contains("binding")) << x.dump();
  EXPECT_NE(x["held_by"], "binding");
}

}  // namespace
}  // namespace gpuaas::core
