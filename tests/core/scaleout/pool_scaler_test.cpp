// PoolScaler's scale-in rules on a hand-made cluster model: which nodes it removes, and which it
// never touches (cluster-autoscaler's scale-down-disabled on a node, safe-to-evict "false" or a
// pod of no queued workload on it, DaemonSet pods ignored). Event time only; no bus.
#include "pool_scaler.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::scaleout {
namespace {

using core::EventTime;
using nlohmann::json;
using std::chrono::seconds;

constexpr const char* kPolicy = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {nvidia.com/gpu.product: H100}}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  flavor: h100
  gpusPerNode: 8
  minNodes: 0
  maxNodes: 4
  scaleOut: {forecast: false}
  scaleIn: {unneededTime: 60s, delayAfterAdd: 0s}
)";

class PoolScalerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = policy::parse_policy_texts({{"policy.yaml", kPolicy}});
    ASSERT_TRUE(loaded.ok()) << loaded.errors.front().str();
    set_ = std::make_shared<const policy::PolicySet>(std::move(loaded.set));
    scheduler_ = std::make_unique<admission::Scheduler>(set_);
    scaler_.set_policy(*set_);
  }
  void add(const json& obj) {
    auto o = decoder_.decode(obj.dump());
    ASSERT_TRUE(o.is_ok()) << o.status().message();
    model_.apply(core::ChangeType::kAdded, std::move(o).value(), now_);
  }
  void node(const std::string& name, const json& annotations = json::object()) {
    add({{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", name},
           {"labels", {{"gpuaas.io/node-pool", "h100"}, {"nvidia.com/gpu.product", "H100"}}},
           {"annotations", annotations}}},
         {"status",
          {{"allocatable", {{"nvidia.com/gpu", "8"}}},
           {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  }
  void pod(const std::string& name, const std::string& node_name,
           const json& annotations = json::object(), const std::string& owner_kind = "") {
    json meta = {{"name", name},
                 {"namespace", "default"},
                 {"labels", {{"app", name.substr(0, name.find('-'))}}},
                 {"annotations", annotations}};
    if (!owner_kind.empty())
      meta["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                              {"kind", owner_kind},
                                              {"name", "o"},
                                              {"uid", "u"},
                                              {"controller", true}}});
    add({{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", meta},
         {"spec", {{"nodeName", node_name}, {"containers", json::array({{{"name", "c"}}})}}},
         {"status", {{"phase", "Running"}}}});
  }
  void budget(int allowed) {
    add({{"apiVersion", "policy/v1"},
         {"kind", "PodDisruptionBudget"},
         {"metadata",
          {{"name", "cache"},
           {"namespace", "default"},
           {"resourceVersion", std::to_string(allowed + 10)}}},
         {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "cache"}}}}}}},
         {"status", {{"disruptionsAllowed", allowed}}}});
  }
  // Passes every scan interval for `span`; returns the names of the nodes asked to be removed
  // (and, in `evicted`, the pods whose eviction was asked for).
  std::set<std::string> run_for(seconds span, std::set<std::string>* evicted = nullptr) {
    std::set<std::string> removed;
    for (EventTime end = now_ + span; now_ <= end; now_ += PoolScaler::kScanInterval) {
      model_.advance(now_);
      auto out = scaler_.pass(model_, *scheduler_, {}, now_);
      for (const auto& a : out.actions) {
        if (evicted && a.target().kind() == "Eviction") evicted->insert(a.target().name());
        const json body = json::parse(a.body_json());
        if (a.target().kind() == "NodePool" && body.contains("nodesToRemove"))
          for (const auto& n : body["nodesToRemove"]) removed.insert(n.get<std::string>());
      }
    }
    return removed;
  }

  core::ClusterModel model_;
  core::ObjectDecoder decoder_;
  std::shared_ptr<const policy::PolicySet> set_;
  std::unique_ptr<admission::Scheduler> scheduler_;
  PoolScaler scaler_;
  EventTime now_ = EventTime(std::chrono::hours(24 * 365 * 56));
};

TEST_F(PoolScalerTest, EmptyNodesGoAfterTheUnneededTimeDaemonSetPodsDoNotCount) {
  node("empty");
  node("daemons");
  pod("node-exporter-x", "daemons", json::object(), "DaemonSet");
  EXPECT_TRUE(run_for(seconds(50)).empty());  // the first look, then unneeded < 60 s
  EXPECT_EQ(run_for(seconds(30)), (std::set<std::string>{"daemons", "empty"}));
}

TEST_F(PoolScalerTest, ScaleDownDisabledAndPodsThatMustStayKeepTheirNodes) {
  node("disabled", {{"cluster-autoscaler.kubernetes.io/scale-down-disabled", "true"}});
  node("pinned");
  pod("db-0", "pinned", {{"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}});
  node("bare");
  pod("debug", "bare");  // a pod of no queued workload, not marked safe to evict
  node("free");
  EXPECT_EQ(run_for(seconds(600)), (std::set<std::string>{"free"}));
}

// A pod that may be evicted (safe-to-evict "true") is drained only while its
// PodDisruptionBudget allows a disruption.
TEST_F(PoolScalerTest, ADrainWaitsForThePodDisruptionBudget) {
  node("spare");
  pod("cache-0", "spare", {{"cluster-autoscaler.kubernetes.io/safe-to-evict", "true"}});
  budget(0);
  std::set<std::string> evicted;
  EXPECT_TRUE(run_for(seconds(300), &evicted).empty());
  EXPECT_TRUE(evicted.empty());
  budget(1);  // the budget's controller says one may go now
  run_for(seconds(20), &evicted);
  EXPECT_EQ(evicted, (std::set<std::string>{"cache-0"}));
}

TEST_F(PoolScalerTest, MinNodesIsTheFloor) {
  auto loaded = policy::parse_policy_texts(
      {{"policy.yaml", std::string(kPolicy).replace(std::string(kPolicy).find("minNodes: 0"), 11,
                                                    "minNodes: 1")}});
  ASSERT_TRUE(loaded.ok());
  scaler_.set_policy(loaded.set);
  node("a");
  node("b");
  EXPECT_EQ(run_for(seconds(600)).size(), 1u);
}

}  // namespace
}  // namespace gpuaas::scaleout
