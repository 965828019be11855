// PoolScaler's scale-in rules on a hand-made cluster model: which nodes it removes, and which it
// never touches (cluster-autoscaler's scale-down-disabled on a node, safe-to-evict "false" or a
// pod of no queued workload on it, DaemonSet pods ignored). Event time only; no bus.
#include "pool_scaler.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/policy/policy_loader.hpp"
#include "scale_in_model.hpp"

namespace gpuaas::core::scaleout {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using wire::EventTime;

class PoolScalerTest : public test::ScaleInModel {
 protected:
  void SetUp() override {
    use_policy(test::pool_policy(0));
    if (HasFatalFailure()) return;
    scaler_.set_policy(*set_);
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

  PoolScaler scaler_;
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
  auto loaded = policy::parse_policy_texts({{"policy.yaml", test::pool_policy(1)}});
  ASSERT_TRUE(loaded.ok());
  scaler_.set_policy(loaded.set);
  node("a");
  node("b");
  EXPECT_EQ(run_for(seconds(600)).size(), 1u);
}

// Replicas a serving forecast needs beyond those running (the serving scale stage's node demand)
// count as pending work: the pool grows for them, as for the queues' own.
TEST_F(PoolScalerTest, ServingReplicasStillToComeAreDemand) {
  node("a");
  admission::NodeDemand chat;
  chat.workload = "serving.kserve.io/InferenceService/llm/chat";
  chat.flavor = "h100";
  chat.flavors = {"h100"};
  chat.pending = true;
  chat.position = INT64_MAX;
  chat.pods = {{1, 1000}};  // one replica of one GPU a demand, as the stage gives them
  const std::vector<admission::NodeDemand> twelve(12, chat);  // 4 more than node a has free
  auto nodes_asked = [](const PoolScaler::Output& out) {
    int64_t replicas = -1;
    for (const auto& a : out.actions)
      if (a.target().kind() == "NodePool")
        replicas = json::parse(a.body_json()).value("replicas", int64_t{-1});
    return replicas;
  };
  model_.advance(now_);
  EXPECT_EQ(nodes_asked(scaler_.pass(model_, *scheduler_, {}, now_, twelve)), -1);  // learns
  now_ += PoolScaler::kScanInterval;
  model_.advance(now_);
  EXPECT_EQ(nodes_asked(scaler_.pass(model_, *scheduler_, {}, now_)), -1);  // nothing waits
  now_ += PoolScaler::kScanInterval;
  model_.advance(now_);
  EXPECT_EQ(nodes_asked(scaler_.pass(model_, *scheduler_, {}, now_, twelve)), 2);
}

}  // namespace
}  // namespace gpuaas::core::scaleout
