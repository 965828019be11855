// Placement that binds, through gpuaasd on a real nats-server with the real plugins: a plain Pod's
// admission narrows it to its planned node; a PyTorchJob's gated pods open together, each on the
// node planned for it; a pod that requires another host stays gated; a pod that runs elsewhere
// moves the accounting where it runs; a restarted daemon binds by the plan its admission wrote;
// serving kinds get a preferred affinity instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "binding_objects.hpp"
#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/daemon_driver.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using Time = sim::Time;
using namespace binding_objects;

// The placement hint of the job's admission: pod set -> node -> count.
std::map<std::string, std::map<std::string, int>> plan_of(const std::vector<v1::Action>& actions,
                                                          const std::string& job) {
  std::map<std::string, std::map<std::string, int>> out;
  for (const auto& a : actions) {
    if (a.target().name() != job) continue;
    const json body = json::parse(a.body_json());
    const auto hint = body["metadata"]["annotations"].value("gpuaas.io/placement", "");
    if (hint.empty()) continue;
    const json parsed = json::parse(hint);
    for (const auto& s : parsed["podSets"])
      for (const auto& [n, c] : s["nodes"].items()) out[s["podSet"]][n] = c.get<int>();
  }
  return out;
}

// Pod name -> the body of the patch that opened its placement gate.
std::map<std::string, json> openings(const std::vector<v1::Action>& actions) {
  std::map<std::string, json> out;
  for (const auto& a : actions) {
    if (a.target().kind() != "Pod" || a.rule() != "placement/bind") continue;
    out[a.target().name()] = json::parse(a.body_json());
  }
  return out;
}

class PodBindingTest : public gpuaas::testing::NatsServerTest {
 protected:
  void SetUp() override {
    gpuaas::testing::NatsServerTest::SetUp();
    sim::DaemonDriver::Options o;
    o.server = url();
    o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
    o.subject_root = "binding" + std::to_string(++runs_);
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
  std::vector<v1::Action> send(sim::Change c, const json& object) {
    driver_->object(c, object, now_ += std::chrono::seconds(1));
    auto r = driver_->settle();
    EXPECT_TRUE(r) << r.status().message();
    return r ? *r : std::vector<v1::Action>{};
  }
  std::vector<v1::Action> add(const json& object) { return send(sim::Change::kAdded, object); }
  json explain(const std::string& w) { return json::parse(driver_->explain_json(w)); }
  double metric(const std::string& line) {
    const std::string text = "\n" + driver_->metrics_text();
    const auto at = text.find("\n" + line + " ");  // a sample, not its # HELP line
    return at == std::string::npos ? -1 : std::stod(text.substr(at + line.size() + 2));
  }

  Time now_{std::chrono::milliseconds(1'800'000'000'000)};
  std::unique_ptr<sim::DaemonDriver> driver_;
  static inline int runs_ = 0;
};

TEST_F(PodBindingTest, APlainPodsAdmissionNarrowsItToItsPlannedNodesHostname) {
  const auto actions = add(plain_pod("solo", 2));
  const v1::Action* open = nullptr;
  for (const auto& a : actions)
    if (a.target().name() == "solo" && a.body_json().find("schedulingGates") != std::string::npos)
      open = &a;
  ASSERT_NE(open, nullptr);
  const json body = json::parse(open->body_json());
  const std::string host = body["spec"]["nodeSelector"].value("kubernetes.io/hostname", "");
  EXPECT_TRUE(host == "host-a" || host == "host-b") << body.dump();
  EXPECT_EQ(body["metadata"]["resourceVersion"], "10") << "conditioned on the pod's version";
}

TEST_F(PodBindingTest, APlainPodWithItsOwnAffinityIsNarrowedInEveryTerm) {
  json p = plain_pod("picky", 1);
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
   ["nodeSelectorTerms"] = json::array(
       {{{"matchExpressions", json::array({{{"key", "zone"}, {"operator", "Exists"}}})}},
        {{"matchExpressions", json::array({{{"key", "rack"}, {"operator", "Exists"}}})}}});
  json body;
  for (const auto& a : add(p))
    if (a.target().name() == "picky") body = json::parse(a.body_json());
  const json terms = body["spec"]["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u) << body.dump();
  for (const auto& t : terms) {
    ASSERT_EQ(t["matchExpressions"].size(), 2u);
    EXPECT_EQ(t["matchExpressions"][1]["key"], "kubernetes.io/hostname");
  }
}

TEST_F(PodBindingTest, APodThatRequiresAnotherHostStaysGatedAndSaysSo) {
  json p = plain_pod("pinned", 1);
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
   ["nodeSelectorTerms"] =
       json::array({{{"matchExpressions", json::array({{{"key", "kubernetes.io/hostname"},
                                                        {"operator", "In"},
                                                        {"values", {"elsewhere"}}}})}}});
  for (const auto& a : add(p))
    EXPECT_FALSE(a.target().name() == "pinned" &&
                 a.body_json().find("schedulingGates") != std::string::npos)
        << a.body_json();
  EXPECT_EQ(metric("gpuaas_pod_bindings_total{result=\"refused\"}"), 1);
}

TEST_F(PodBindingTest, AGangOfFourOpensTogetherEachOnItsPlannedNode) {
  const auto admitted = add(pytorchjob("train", 3, 4));
  const auto plan = plan_of(admitted, "train");
  ASSERT_EQ(plan.size(), 2u) << "master and worker";
  std::vector<json> pods = {job_pod("train", "master", 0, 4)};
  for (int i = 0; i < 3; ++i) pods.push_back(job_pod("train", "worker", i, 4));
  for (std::size_t i = 0; i + 1 < pods.size(); ++i)
    EXPECT_TRUE(openings(add(pods[i])).empty()) << "opened before all four exist: " << i;
  const auto opened = openings(add(pods.back()));
  ASSERT_EQ(opened.size(), 4u);
  std::map<std::string, std::map<std::string, int>> got;
  for (const auto& [name, body] : opened) {
    EXPECT_EQ(body["spec"]["schedulingGates"],
              json::array({{{"name", "example.com/other"}}}))  // the other gate is kept
        << body.dump();
    EXPECT_EQ(body["metadata"]["resourceVersion"], "20");
    const std::string host = body["spec"]["nodeSelector"]["kubernetes.io/hostname"];
    const std::string set = name.find("master") != std::string::npos ? "master" : "worker";
    ++got[set][host.substr(std::string("host-").size())];
  }
  EXPECT_EQ(got, plan);
}

TEST_F(PodBindingTest, APodRunningElsewhereMovesTheAccountingWhereItRuns) {
  // One 8-GPU pod planned on one node; it runs on the other (its gate removed by hand).
  const auto plan = plan_of(add(pytorchjob("big", 0, 8)), "big");
  ASSERT_EQ(plan.size(), 1u);
  const std::string planned = plan.begin()->second.begin()->first;
  const std::string other = planned == "a" ? "b" : "a";
  json p = job_pod("big", "master", 0, 8);
  p["spec"].erase("schedulingGates");
  p["spec"]["nodeName"] = other;
  p["status"]["phase"] = "Running";
  add(p);
  EXPECT_EQ(metric("gpuaas_pods_bound_elsewhere_total"), 1);
  // The placement followed the pod: the planned node is free, the other full, so the next
  // 8-GPU job goes to the planned node (counting both would leave it waiting for nodes).
  const auto next = plan_of(add(pytorchjob("next", 0, 8)), "next");
  ASSERT_EQ(next.size(), 1u) << explain("research/next").dump();
  EXPECT_EQ(next.begin()->second.begin()->first, planned);
  // And a third finds no room: the pod is counted where it runs, not nowhere.
  add(pytorchjob("third", 0, 8));
  EXPECT_EQ(explain("research/third")["reason"], "WaitingForNodes");
}

TEST_F(PodBindingTest, AGangRunningPartlyElsewhereKeepsTheRestOfItsPlan) {
  // Two 4-GPU pods planned together; one runs on the other node: its replacement goes there.
  const auto plan = plan_of(add(pytorchjob("pair", 1, 4)), "pair");
  ASSERT_EQ(plan.size(), 2u);
  const std::string master_node = plan.at("master").begin()->first;
  const std::string other = master_node == "a" ? "b" : "a";
  json m = job_pod("pair", "master", 0, 4);
  m["spec"].erase("schedulingGates");
  m["spec"]["nodeName"] = other;
  m["status"]["phase"] = "Running";
  add(m);
  json w = job_pod("pair", "worker", 0, 4);
  w["spec"].erase("schedulingGates");
  w["spec"]["nodeName"] = plan.at("worker").begin()->first;
  w["status"]["phase"] = "Running";
  add(w);
  EXPECT_EQ(metric("gpuaas_pods_bound_elsewhere_total"), 1) << "the worker runs where planned";
  send(sim::Change::kDeleted, m);
  json again = job_pod("pair", "master", 0, 4);
  again["metadata"]["name"] = "pair-master-0b";
  again["metadata"]["uid"] = "uid-pair-master-0b";
  const auto opened = openings(add(again));
  ASSERT_EQ(opened.count("pair-master-0b"), 1u);
  EXPECT_EQ(opened.at("pair-master-0b")["spec"]["nodeSelector"]["kubernetes.io/hostname"],
            "host-" + other)
      << "the slot moved with the pod that ran there";
}

TEST_F(PodBindingTest, ARestartedDaemonBindsTheReplacementPodOfARunningGang) {
  const auto admitted = add(pytorchjob("train", 1, 4));
  ASSERT_EQ(plan_of(admitted, "train").size(), 2u);
  // The job as the cluster has it: admitted, running, its master on a node; its worker was
  // lost and the operator made it again from the gated template.
  json job = pytorchjob("train", 1, 4);
  for (const auto& a : admitted)
    if (a.target().name() == "train") job.merge_patch(json::parse(a.body_json()));
  job["status"]["conditions"] = json::array({{{"type", "Running"}, {"status", "True"}}});
  json master = job_pod("train", "master", 0, 4);
  master["spec"].erase("schedulingGates");
  master["spec"]["nodeName"] = "a";
  master["status"]["phase"] = "Running";
  // A new daemon (a restart without a snapshot, or a failover) adopts the running job.
  sim::DaemonDriver::Options o;
  o.server = url();
  o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
  o.subject_root = "binding-restart" + std::to_string(++runs_);
  auto d = sim::DaemonDriver::start(o);
  ASSERT_TRUE(d) << d.status().message();
  driver_ = std::move(d).value();
  auto p = sim::policy_set_json({{"policy.yaml", policy()}});
  ASSERT_TRUE(p) << p.status().message();
  driver_->object(sim::Change::kAdded, json::parse(*p), now_);
  driver_->object(sim::Change::kAdded, node("a", 8), now_);
  driver_->object(sim::Change::kAdded, node("b", 8), now_);
  add(job);
  ASSERT_EQ(explain("research/train")["state"], "Admitted");
  add(master);
  const auto opened = openings(add(job_pod("train", "worker", 0, 4)));
  ASSERT_EQ(opened.count("train-worker-0"), 1u) << "it does not stay gated";
  const std::string host =
      opened.at("train-worker-0")["spec"]["nodeSelector"].value("kubernetes.io/hostname", "");
  EXPECT_TRUE(host == "host-a" || host == "host-b") << opened.at("train-worker-0").dump();
  EXPECT_EQ(metric("gpuaas_pod_bindings_total{result=\"unplanned\"}"), 0);
}

TEST_F(PodBindingTest, AnInferenceServiceGetsAPreferredAffinityAndNoNarrowing) {
  const json isvc = {{"apiVersion", "serving.kserve.io/v1beta1"},
                     {"kind", "InferenceService"},
                     {"metadata",
                      {{"name", "llm"},
                       {"namespace", "research"},
                       {"uid", "uid-llm"},
                       {"resourceVersion", "5"},
                       {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}},
                       {"annotations",
                        {{"serving.kserve.io/stop", "true"},
                         {"serving.kserve.io/deploymentMode", "RawDeployment"}}}}},
                     {"spec",
                      {{"predictor",
                        {{"model",
                          {{"modelFormat", {{"name", "huggingface"}}},
                           {"storageUri", "hf://x/y"},
                           {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}}}}}};
  json body;
  for (const auto& a : add(isvc))
    if (a.target().name() == "llm" &&
        a.body_json().find("gpuaas.io/placement") != std::string::npos)
      body = json::parse(a.body_json());
  ASSERT_TRUE(body.is_object()) << explain("research/llm").dump();
  const json hint =
      json::parse(body["metadata"]["annotations"]["gpuaas.io/placement"].get<std::string>());
  const std::string planned = hint["podSets"][0]["nodes"].begin().key();
  const json affinity = body["spec"]["predictor"]["affinity"]["nodeAffinity"];
  ASSERT_EQ(affinity["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u) << body.dump();
  EXPECT_EQ(affinity["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]
                    ["matchExpressions"][0]["values"],
            json::array({"host-" + planned}));
  EXPECT_FALSE(affinity.contains("requiredDuringSchedulingIgnoredDuringExecution"));
  EXPECT_FALSE(body["spec"]["predictor"].contains("nodeSelector") &&
               body["spec"]["predictor"]["nodeSelector"].contains("kubernetes.io/hostname"))
      << "preferred never narrows: a scale-up never waits for gpuaasd";
}

TEST_F(PodBindingTest, APodStillUnschedulableAfterTheBindTimeoutRequeuesItsWorkload) {
  add(plain_pod("stuck", 1));  // admitted and narrowed
  json p = plain_pod("stuck", 1);
  p["metadata"]["resourceVersion"] = "11";
  p["spec"].erase("schedulingGates");
  p["status"]["conditions"] = json::array({{{"type", "PodScheduled"},
                                            {"status", "False"},
                                            {"reason", "Unschedulable"},
                                            {"message", "0/2 nodes are available"}}});
  EXPECT_TRUE(send(sim::Change::kModified, p).empty()) << "within the timeout it waits";
  driver_->tick(now_ += std::chrono::minutes(3));
  auto r = driver_->settle();
  ASSERT_TRUE(r) << r.status().message();
  bool requeued = false;
  for (const auto& a : *r)
    requeued = requeued || (a.target().name() == "stuck" && a.rule() == "placement/bindTimeout");
  EXPECT_TRUE(requeued)
      << "the pod plugin stops a Pod by deleting it; its controller makes it anew";
}

// Requeued by its bind timeout, a gang holds its quota until its object is seen stopped: an
// update meanwhile (the bridge writing its status) must not queue it again, or it would be
// admitted while its suspension is still on the way, and then sit suspended as admitted.
TEST_F(PodBindingTest, AGangRequeuedByItsBindTimeoutIsPlacedAgainOnlyOnceItHasStopped) {
  json job = pytorchjob("slow", 0, 8);
  const auto plan = plan_of(add(job), "slow");
  ASSERT_EQ(plan.size(), 1u);
  job["metadata"]["resourceVersion"] = "4";
  job["spec"]["runPolicy"]["suspend"] = false;  // as the admission left it
  send(sim::Change::kModified, job);
  ASSERT_EQ(openings(add(job_pod("slow", "master", 0, 8))).size(), 1u);
  json pod = job_pod("slow", "master", 0, 8);
  pod["metadata"]["resourceVersion"] = "21";
  pod["spec"].erase("schedulingGates");
  pod["status"]["conditions"] = json::array({{{"type", "PodScheduled"},
                                              {"status", "False"},
                                              {"reason", "Unschedulable"},
                                              {"message", "0/2 nodes are available"}}});
  send(sim::Change::kModified, pod);
  driver_->tick(now_ += std::chrono::minutes(3));
  auto r = driver_->settle();
  ASSERT_TRUE(r) << r.status().message();
  const auto requeue = std::find_if(r->begin(), r->end(), [](const v1::Action& a) {
    return a.target().name() == "slow" && a.rule() == "placement/bindTimeout";
  });
  ASSERT_NE(requeue, r->end());

  job["metadata"]["resourceVersion"] = "5";
  job["metadata"]["annotations"]["gpuaas.io/status"] = R"({"reason":"Evicting"})";
  for (const auto& a : send(sim::Change::kModified, job))
    EXPECT_FALSE(a.target().name() == "slow" && a.rule().rfind("admission/", 0) == 0)
        << "admitted again before it stopped: " << a.body_json();
  EXPECT_EQ(explain("research/slow")["state"], "Evicting");

  job["metadata"]["resourceVersion"] = "6";
  job["spec"]["runPolicy"]["suspend"] = true;  // the requeue took effect
  send(sim::Change::kDeleted, pod);
  bool again = false;
  for (const auto& a : send(sim::Change::kModified, job))
    again = again || (a.target().name() == "slow" && a.rule().rfind("admission/", 0) == 0);
  EXPECT_TRUE(again) << "stopped: queued and placed again";
}

TEST_F(PodBindingTest, BindingOffOpensWithoutANode) {
  // The same cluster, a policy that turns binding off: the plan is published, nothing narrowed.
  sim::DaemonDriver::Options o;
  o.server = url();
  o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
  o.subject_root = "binding-off" + std::to_string(++runs_);
  auto d = sim::DaemonDriver::start(o);
  ASSERT_TRUE(d) << d.status().message();
  driver_ = std::move(d).value();
  const std::string off = policy() + R"(---
apiVersion: gpuaas.io/v1alpha1
kind: AdmissionPolicy
metadata: {name: default}
spec: {placement: {binding: "off"}}
)";
  auto p = sim::policy_set_json({{"policy.yaml", off}});
  ASSERT_TRUE(p) << p.status().message();
  driver_->object(sim::Change::kAdded, json::parse(*p), now_);
  driver_->object(sim::Change::kAdded, node("a", 8), now_);
  ASSERT_TRUE(driver_->settle());
  add(pytorchjob("loose", 0, 4));
  const auto opened = openings(add(job_pod("loose", "master", 0, 4)));
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_FALSE(opened.begin()->second["spec"].contains("nodeSelector"))
      << opened.begin()->second.dump();
}

}  // namespace
}  // namespace gpuaas::core
