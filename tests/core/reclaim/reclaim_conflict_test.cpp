// Idle reclaim's patches after a 409, and a RayJob that runs on a RayCluster at zero. A scale to
// zero that met a conflict is computed again from the newer object and sent again (as admission
// is), never while the model still holds the version that conflicted; a RayJob that names the
// cluster through clusterSelector is demand for it, so the cluster wakes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness_objects.hpp"
#include "nats_fixture.hpp"
#include "reclaim_harness.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::Harness;

std::string policy() {
  return test::cluster_policy() +
         "apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: idle}\n"
         "spec:\n  selector: {kinds: [RayCluster]}\n"
         "  idle: {window: 10m}\n  gracePeriod: 0s\n  stabilizationWindow: 0s\n  cooldown: 0s\n"
         "  keepQuotaFor: 1h\n  lendIdleQuota: false\n";
}

v1::ActionResult conflict(const json& action, const std::string& rv) {
  v1::ActionResult r;
  r.mutable_target()->set_api_version("ray.io/v1");
  r.mutable_target()->set_kind(action["target"]["kind"].get<std::string>());
  r.mutable_target()->set_namespace_(action["target"]["namespace"].get<std::string>());
  r.mutable_target()->set_name(action["target"]["name"].get<std::string>());
  r.set_decision_id(action["decision_id"].get<std::string>());
  r.set_rule(action["rule"].get<std::string>());
  r.set_outcome(v1::ActionResult::CONFLICT);
  r.set_http_status(409);
  r.set_resource_version(rv);
  return r;
}

// On a real nats-server: the 409 comes back as the bridge sends it, an ActionResult event.
class ReclaimConflictTest : public gpuaas::testing::NatsServerTest {};

TEST_F(ReclaimConflictTest, AScaleToZeroThatMetAConflictIsPatchedAgainOnTheNewerObject) {
  Harness h(policy(), url());
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(h.now + 10min + 30s, 0.0);
  const auto zero = h.with_rule("reclaim/idle");
  ASSERT_EQ(zero.size(), 1u) << h.explain("team-a/rc").dump();
  const std::string rv = h.object("team-a", "rc")["metadata"]["resourceVersion"];

  // The 409 arrives while the model still holds the version it conflicted on: nothing yet.
  h.action_result(conflict(zero[0], rv));
  EXPECT_EQ(h.with_rule("reclaim/idle").size(), 1u);
  // The newer version arrives: the same decision, recomputed from it, with a new id.
  h.touch("team-a", "rc");
  const auto again = h.with_rule("reclaim/idle");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_NE(again[1]["decision_id"], zero[0]["decision_id"]);
  EXPECT_EQ(again[1]["body"]["spec"]["workerGroupSpecs"][0]["replicas"], 0) << again[1].dump();
  // Once: a later edit does not patch a third time.
  h.touch("team-a", "rc");
  EXPECT_EQ(h.with_rule("reclaim/idle").size(), 2u);
  EXPECT_EQ(h.metric("gpuaas_conflicts_redone_total{result=\"redone\"}"), 1);
}

TEST_F(ReclaimConflictTest, ARayJobOnAClusterAtZeroWakesIt) {
  Harness h(policy(), url());
  h.running_ray_cluster("team-a", "rc", 2);
  h.run_until(h.now + 10min + 30s, 0.0);
  ASSERT_EQ(h.with_rule("reclaim/idle").size(), 1u);
  h.apply_last_patch("team-a", "rc");  // at zero
  ASSERT_EQ(h.explain("team-a/rc")["reclaim"]["state"], "AtZero") << h.explain("team-a/rc").dump();
  EXPECT_TRUE(h.with_rule("reclaim/wake").empty());

  h.publish(
      sim::Change::kAdded,
      {{"apiVersion", "ray.io/v1"},
       {"kind", "RayJob"},
       {"metadata",
        {{"name", "job"}, {"namespace", "team-a"}, {"uid", "uid-job"}, {"resourceVersion", "3"}}},
       {"spec",
        {{"entrypoint", "python train.py"},
         {"submissionMode", "HTTPMode"},
         {"clusterSelector", {{"ray.io/cluster", "rc"}}}}}});
  const auto wake = h.with_rule("reclaim/wake");
  ASSERT_EQ(wake.size(), 1u) << h.explain("team-a/rc").dump();
  EXPECT_EQ(wake[0]["target"]["name"], "rc");
  EXPECT_NE(wake[0]["reason"].get<std::string>().find("RayJob team-a/job runs on it"),
            std::string::npos)
      << wake[0].dump();
  EXPECT_GT(wake[0]["body"]["spec"]["workerGroupSpecs"][0]["replicas"], 0) << wake[0].dump();
}

}  // namespace
}  // namespace gpuaas::core
