// Serving scale in gpuaasd, as event sequences: a KServe InferenceService (Knative mode, the real
// kserve plugin) whose replicas report vLLM's request counter; gpuaasd sets its autoscaler's
// bounds from the demand forecast, within its ClusterQueue's quota, and leaves zero to the idle
// rules. Event time only: nothing sleeps. That the fields written are those KServe reads is
// checked on KServe's published manifests by the plugin's own tests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness_objects.hpp"
#include "reclaim_harness.hpp"

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::Harness;

// 10 requests per second per replica at p95 TTFT 400 ms, a fifth kept free: a target of 8.
const std::string kObjective =
    "apiVersion: gpuaas.io/v1alpha1\nkind: ServiceObjective\nmetadata: {name: chat}\n"
    "spec:\n  selector: {kinds: [InferenceService]}\n  latency: {ttftP95: 400ms}\n"
    "  scaling: {perReplicaRps: 10, headroom: 0.2, leadTime: 60s, interval: 30s}\n---\n";

const std::string kIdle =
    "apiVersion: gpuaas.io/v1alpha1\nkind: IdleReclaimPolicy\nmetadata: {name: idle}\n"
    "spec:\n  selector: {kinds: [InferenceService]}\n  idle: {window: 5m}\n  gracePeriod: 0s\n"
    "  stabilizationWindow: 0s\n  cooldown: 0s\n  keepQuotaFor: 1h\n  lendIdleQuota: false\n";

class Service {
 public:
  Service(Harness& h, std::string name) : h_(h), name_(std::move(name)) {}

  // Submitted, admitted, and started with one replica.
  void start() {
    object_ = test::inference_service(name_);
    h_.publish(sim::Change::kAdded, object_);
    ASSERT_TRUE(h_.admitted("team-a", name_)) << h_.explain("team-a/" + name_).dump(2);
    follow_patch();
    object_["status"] = {{"deploymentMode", "Serverless"},
                         {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
    h_.publish(sim::Change::kModified, object_);
    replicas(1);
  }
  // KServe carries out gpuaasd's last patch on the object.
  void follow_patch() {
    object_ = h_.patched("team-a", name_, object_);
    h_.publish(sim::Change::kModified, object_);
  }
  // Knative's autoscaler runs `n` replicas.
  void replicas(int n) {
    while (running_ < n) h_.publish(sim::Change::kAdded, test::isvc_replica(name_, running_++));
    while (running_ > n) h_.publish(sim::Change::kDeleted, test::isvc_replica(name_, --running_));
  }
  // `seconds` of traffic at `rps`, shared by the replicas, scraped every 30 s; with `util`,
  // dcgm-exporter's utilisation of each replica's GPU too.
  void serve(double rps, int seconds, double util = 50) {
    for (int t = 0; t < seconds; t += 30) {
      h_.now += 30s;
      for (int i = 0; i < running_; ++i) {
        per_replica_[i] += rps * 30 / running_;
        const std::string pod = test::isvc_replica(name_, i)["metadata"]["name"];
        h_.samples("team-a",
                   {{{{"namespace", "team-a"}, {"pod", pod}, {"finished_reason", "stop"}},
                     per_replica_[i]}},
                   "vllm:request_success_total");
        h_.gpu_util("team-a", pod, util);
      }
      h_.tick();
    }
  }
  std::vector<json> scales() const {
    std::vector<json> out;
    for (const auto& a : h_.with_rule("serving/scale"))
      if (a["target"]["name"] == name_) out.push_back(a);
    return out;
  }
  const json& object() const { return object_; }
  const json& predictor() const { return object_["spec"]["predictor"]; }

 private:
  Harness& h_;
  std::string name_;
  json object_;
  int running_ = 0;
  std::map<int, double> per_replica_;
};

TEST(ServingScaleTest, ReplicasFollowADemandRampWithinQuota) {
  Harness h(test::cluster_policy() + kObjective);
  Service chat(h, "chat");
  chat.start();
  int last_min = 0;
  for (double rps : {4.0, 12.0, 20.0, 30.0}) {
    chat.serve(rps, 90);
    ASSERT_FALSE(chat.scales().empty()) << h.explain("team-a/chat").dump(2);
    chat.follow_patch();
    const json& p = chat.predictor();
    // The bounds KServe reads (its v1beta1 ComponentExtensionSpec): the rps metric at a target of
    // 10 x (1 - 0.2), enough replicas for the forecast at that target, and the quota's cap:
    // 4 GPUs of serving plus 4 its cohort lends, one replica each.
    EXPECT_EQ(p["scaleMetric"], "rps") << p.dump();
    EXPECT_EQ(p["scaleTarget"], 8);
    EXPECT_EQ(p["maxReplicas"], 8);
    const int min = p["minReplicas"].get<int>();
    EXPECT_GE(min, static_cast<int>(std::ceil(rps / 8))) << chat.scales().back()["reason"];
    EXPECT_GE(min, last_min);
    last_min = min;
    chat.replicas(min);
  }
  EXPECT_GE(last_min, 4);  // 30 req/s at 8 each, and the trend ahead
  const auto last = chat.scales().back();
  EXPECT_EQ(last["target"]["kind"], "InferenceService");
  EXPECT_NE(last["reason"].get<std::string>().find("10 req/s per replica at p95 TTFT 400ms"),
            std::string::npos)
      << last["reason"];
  // Steady: the trend fades, the minimum settles at the need, and nothing more is sent.
  chat.serve(30, 900);
  const json x = h.explain("team-a/chat");
  ASSERT_TRUE(x.contains("serving")) << x.dump(2);
  EXPECT_EQ(x["serving"]["scale"]["bounds"]["min_replicas"], 4) << x.dump(2);
  EXPECT_NEAR(x["serving"]["scale"]["demand_rps"].get<double>(), 30, 0.5) << x.dump(2);
  EXPECT_EQ(h.metric("gpuaas_service_replica_bounds{bound=\"min\",namespace=\"team-a\","
                     "service=\"chat\"}"),
            4);
  const std::size_t sent = chat.scales().size();
  chat.serve(30, 300);
  EXPECT_EQ(chat.scales().size(), sent);
  // Demand falls: the minimum follows it down once the scale-down window has passed (the
  // autoscaler may go lower, not below it).
  chat.serve(5, 120);
  chat.follow_patch();
  EXPECT_EQ(chat.predictor()["minReplicas"], 4);
  chat.serve(5, 600);
  chat.follow_patch();
  EXPECT_EQ(chat.predictor()["minReplicas"], 1);
  // Deleted: its series go with it.
  h.publish(sim::Change::kDeleted, chat.object());
  EXPECT_EQ(h.metric("gpuaas_service_replica_bounds{bound=\"min\",namespace=\"team-a\","
                     "service=\"chat\"}"),
            -1);
}

TEST(ServingScaleTest, TheQuotaCapsReplicasAndTheReasonSaysSo) {
  Harness h(test::cluster_policy() + kObjective);
  // team-b's batch takes its own 4 GPUs and 2 of the cohort's: serving may lend none of its
  // guaranteed quota away, but borrowing is capped at what is left.
  h.publish(sim::Change::kAdded, test::batch_job("train", 4, true));
  ASSERT_EQ(h.gpu_usage("batch"), "4");
  Service chat(h, "chat");
  chat.start();
  chat.serve(100, 90);  // 13 replicas' worth
  const auto scales = chat.scales();
  ASSERT_FALSE(scales.empty()) << h.explain("team-a/chat").dump(2);
  chat.follow_patch();
  const json& p = chat.predictor();
  EXPECT_EQ(p["maxReplicas"], 4) << p.dump();  // serving's 4 GPUs; batch uses the rest
  EXPECT_EQ(p["minReplicas"], 4);
  const std::string why = scales.back()["reason"];
  EXPECT_NE(why.find("max 4 by quota"), std::string::npos) << why;
  EXPECT_NE(why.find("nvidia.com/gpu of flavor l40s in ClusterQueue serving"), std::string::npos)
      << why;
  const json x = h.explain("team-a/chat");
  EXPECT_TRUE(x["serving"]["scale"]["capped"].get<bool>()) << x.dump(2);
  EXPECT_EQ(h.metric("gpuaas_serving_scale_actions_total{capped=\"true\"}"), 1);
}

TEST(ServingScaleTest, IdleGoesToZeroByTheIdleRulesAndTheBoundsComeBackAfterTheWake) {
  Harness h(test::cluster_policy() + kObjective + kIdle);
  Service chat(h, "chat");
  chat.start();
  chat.serve(20, 120);
  const std::size_t before = chat.scales().size();
  ASSERT_GT(before, 0u);
  chat.follow_patch();
  EXPECT_GE(chat.predictor()["minReplicas"].get<int>(), 3);
  chat.replicas(chat.predictor()["minReplicas"].get<int>());
  // No request and idle GPUs for the idle window: the idle rules scale it to zero (Knative's
  // minReplicas 0), its quota kept; serving scale sends nothing while it is there.
  chat.serve(0, 420, 0);
  const auto zero = h.with_rule("reclaim/idle");
  ASSERT_EQ(zero.size(), 1u) << h.explain("team-a/chat").dump(2);
  chat.follow_patch();
  EXPECT_EQ(chat.predictor()["minReplicas"], 0);
  chat.replicas(0);
  const std::size_t at_zero = chat.scales().size();
  chat.serve(0, 300, 0);
  EXPECT_EQ(chat.scales().size(), at_zero);
  EXPECT_EQ(h.explain("team-a/chat")["serving"]["scale"]["state"], "idle");
  EXPECT_EQ(h.gpu_usage("serving"), "1");  // reserved while at zero
  // A request at the activator wakes it; with its replica back and serving, the bounds return.
  h.now += 1s;
  h.samples("team-a", {{{{"namespace", "team-a"}, {"configuration_name", "chat-predictor"}}, 0}},
            "revision_request_count");
  h.now += 1s;
  h.samples("team-a", {{{{"namespace", "team-a"}, {"configuration_name", "chat-predictor"}}, 1}},
            "revision_request_count");
  h.tick();
  const auto wake = h.with_rule("reclaim/wake");
  ASSERT_FALSE(wake.empty()) << h.explain("team-a/chat").dump(2);
  chat.follow_patch();
  chat.replicas(1);
  chat.serve(12, 90);
  ASSERT_GT(chat.scales().size(), at_zero) << h.explain("team-a/chat").dump(2);
  chat.follow_patch();
  EXPECT_EQ(chat.predictor()["minReplicas"], 2);  // 12 req/s at 8 each
}

}  // namespace
}  // namespace gpuaas::core
