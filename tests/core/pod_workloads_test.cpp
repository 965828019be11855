// Plain Pods and their controllers as Kueue's pod integration treats them, through gpuaasd on a
// real nats-server with the real plugins: a gated Pod is admitted by opening its gate, a pod
// group only once all its pods exist, a Deployment's pods one by one within quota, a
// StatefulSet's pods as one group; namespaceSelectors read the Namespace's labels and a Pod's
// priorityClassName gives its priority through the PriorityClass.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/daemon_driver.hpp"
#include "nats_fixture.hpp"
#include "scaleout/scale_in_model.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using Time = sim::Time;

// One ClusterQueue of `gpus` GPUs for namespaces labelled team=a; lower priority may be preempted.
std::string policy(int gpus) {
  return R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: l40s}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-L40S}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {matchLabels: {team: a}}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: l40s
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: )" +
         std::to_string(gpus) + R"(}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: research}
spec: {clusterQueue: team-a}
)";
}

json node() {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "l40s-1"}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-L40S"}}}}},
      {"status",
       {{"capacity", {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}}},
        {"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json namespace_(const std::string& name, const std::string& team, int version = 1) {
  json ns = {
      {"apiVersion", "v1"},
      {"kind", "Namespace"},
      {"metadata",
       {{"name", name}, {"uid", "ns-" + name}, {"resourceVersion", std::to_string(version)}}}};
  if (!team.empty()) ns["metadata"]["labels"]["team"] = team;
  return ns;
}

// A Pod as the webhook leaves it: the queue label and the admission gate (and another gate).
json pod(const std::string& name, int gpus = 1) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "research"},
            {"uid", "uid-" + name},
            {"resourceVersion", "10"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec",
           {{"schedulingGates", json::array({{{"name", "kueue.x-k8s.io/admission"}},
                                             {{"name", "example.com/other"}}})},
            {"containers",
             json::array(
                 {{{"name", "main"},
                   {"image", "trainer"},
                   {"resources",
                    {{"limits", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
          {"status", {{"phase", "Pending"}}}};
}

json grouped(json p, const std::string& group, int total) {
  p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = group;
  p["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = std::to_string(total);
  return p;
}

json owned_by(json p, const std::string& kind, const std::string& name) {
  p["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                                   {"kind", kind},
                                                   {"name", name},
                                                   {"uid", "uid-" + name},
                                                   {"controller", true}}});
  return p;
}

// Whether the action opens the pod's admission gate and keeps the other one.
bool opens_gate(const v1::Action& a) {
  const json body = json::parse(a.body_json());
  const json gates = body["spec"]["schedulingGates"];
  return a.operation() == v1::Action::MERGE_PATCH && gates.is_array() && gates.size() == 1 &&
         gates[0]["name"] == "example.com/other";
}

std::set<std::string> gate_openings(const std::vector<v1::Action>& actions) {
  std::set<std::string> names;
  for (const auto& a : actions)
    if (a.target().kind() == "Pod" && opens_gate(a)) names.insert(a.target().name());
  return names;
}

class PodWorkloadsTest : public gpuaas::testing::NatsServerTest {
 protected:
  void start(int gpus, const std::string& team = "a") {
    start_with(policy(gpus));
    driver_->object(sim::Change::kAdded, node(), now_);
    driver_->object(sim::Change::kAdded, namespace_("research", team), now_);
    ASSERT_TRUE(driver_->settle());
  }
  void start_with(const std::string& policy_text) {
    sim::DaemonDriver::Options o;
    o.server = url();
    o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
    o.subject_root = "pods" + std::to_string(++runs_);
    auto d = sim::DaemonDriver::start(o);
    ASSERT_TRUE(d) << d.status().message();
    driver_ = std::move(d).value();
    auto p = sim::policy_set_json({{"policy.yaml", policy_text}});
    ASSERT_TRUE(p) << p.status().message();
    driver_->object(sim::Change::kAdded, json::parse(*p), now_);
    ASSERT_TRUE(driver_->settle());
  }
  std::vector<v1::Action> add(const json& object) {
    driver_->object(sim::Change::kAdded, object, later());
    return settle();
  }
  std::vector<v1::Action> settle() {
    auto r = driver_->settle();
    EXPECT_TRUE(r) << r.status().message();
    return r ? *r : std::vector<v1::Action>{};
  }
  json explain(const std::string& w) { return json::parse(driver_->explain_json(w)); }
  Time later() { return now_ += std::chrono::seconds(1); }

  Time now_{std::chrono::milliseconds(1'800'000'000'000)};
  std::unique_ptr<sim::DaemonDriver> driver_;
  static inline int runs_ = 0;
};

TEST_F(PodWorkloadsTest, APluginClaimsPods) {
  start(8);
  bool found = false;
  for (const auto& p : driver_->plugins()) found = found || p.rfind("pod ", 0) == 0;
  EXPECT_TRUE(found);
}

TEST_F(PodWorkloadsTest, AGatedPodIsAdmittedByOpeningItsGate) {
  start(8);
  auto actions = add(pod("solo"));
  EXPECT_EQ(gate_openings(actions), std::set<std::string>{"solo"});
  EXPECT_EQ(explain("research/solo")["state"], "Admitted") << explain("research/solo").dump();
}

TEST_F(PodWorkloadsTest, APodWithoutTheQueueLabelIsLeftAlone) {
  start(8);
  json p = pod("plain");
  p["metadata"]["labels"] = json::object();
  EXPECT_TRUE(add(p).empty());
  EXPECT_TRUE(explain("research/plain").contains("error"));
}

TEST_F(PodWorkloadsTest, AGroupOfFourIsAdmittedOnlyOnceAllFourExist) {
  start(8);
  for (int i = 0; i < 3; ++i) {
    auto actions = add(grouped(pod("g-" + std::to_string(i)), "gang", 4));
    EXPECT_TRUE(gate_openings(actions).empty()) << "pod " << i;
  }
  const json x = explain("research/g-1");
  EXPECT_EQ(x["state"], "Pending") << x.dump();
  EXPECT_EQ(x["reason"], "GroupNotReady");
  EXPECT_NE(x["message"].get<std::string>().find("3 of 4"), std::string::npos) << x.dump();
  auto actions = add(grouped(pod("g-3"), "gang", 4));
  EXPECT_EQ(gate_openings(actions), (std::set<std::string>{"g-0", "g-1", "g-2", "g-3"}));
}

TEST_F(PodWorkloadsTest, AGroupWhosePodsDisagreeOnItsSizeGetsAReason) {
  start(8);
  add(grouped(pod("d-0"), "odd", 2));
  EXPECT_TRUE(gate_openings(add(grouped(pod("d-1"), "odd", 3))).empty());
  const json x = explain("research/d-0");
  EXPECT_EQ(x["reason"], "GroupNotReady") << x.dump();
  EXPECT_NE(x["message"].get<std::string>().find("disagree"), std::string::npos) << x.dump();
}

TEST_F(PodWorkloadsTest, ADeploymentScaledPastItsQuotaRunsThreeAndTwoWaitWithAReason) {
  start(3);
  std::set<std::string> admitted;
  for (int i = 0; i < 5; ++i) {
    auto p = owned_by(pod("web-" + std::to_string(i)), "ReplicaSet", "web-7d9f");
    for (const auto& n : gate_openings(add(p))) admitted.insert(n);
  }
  EXPECT_EQ(admitted.size(), 3u);
  int waiting = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "web-" + std::to_string(i);
    if (admitted.count(name)) continue;
    const json x = explain("research/" + name);
    EXPECT_EQ(x["state"], "Pending") << x.dump();
    EXPECT_FALSE(x["reason"].get<std::string>().empty()) << x.dump();
    EXPECT_FALSE(x["message"].get<std::string>().empty()) << x.dump();
    ++waiting;
  }
  EXPECT_EQ(waiting, 2);
}

TEST_F(PodWorkloadsTest, AStatefulSetsPodsAreAdmittedAsOneGroup) {
  start(8);
  // As the webhook writes its pod template: the group is the StatefulSet, of spec.replicas.
  auto member = [](int i) {
    return grouped(owned_by(pod("db-" + std::to_string(i)), "StatefulSet", "db"), "statefulset-db",
                   2);
  };
  EXPECT_TRUE(gate_openings(add(member(0))).empty());
  EXPECT_EQ(gate_openings(add(member(1))), (std::set<std::string>{"db-0", "db-1"}));
}

TEST_F(PodWorkloadsTest, ANamespaceSelectorReadsTheNamespacesLabels) {
  start(8, "b");  // research is not team a: the ClusterQueue does not take it
  EXPECT_TRUE(gate_openings(add(pod("outsider"))).empty());
  const json x = explain("research/outsider");
  EXPECT_EQ(x["state"], "Pending") << x.dump();
  // Labelled team=a: the same ClusterQueue admits it.
  driver_->object(sim::Change::kModified, namespace_("research", "a", 2), later());
  EXPECT_EQ(gate_openings(settle()), std::set<std::string>{"outsider"});
}

TEST_F(PodWorkloadsTest, APriorityClassGivesThePodsPriority) {
  start(1);
  driver_->object(sim::Change::kAdded,
                  {{"apiVersion", "scheduling.k8s.io/v1"},
                   {"kind", "PriorityClass"},
                   {"metadata", {{"name", "high"}, {"uid", "pc-high"}, {"resourceVersion", "1"}}},
                   {"value", 100000}},
                  later());
  (void)settle();
  json low = pod("low");
  low["status"]["phase"] = "Running";
  EXPECT_EQ(gate_openings(add(low)), std::set<std::string>{"low"});
  json running = low;
  running["spec"].erase("schedulingGates");
  running["metadata"]["resourceVersion"] = "11";
  running["spec"]["nodeName"] = "l40s-1";
  driver_->object(sim::Change::kModified, running, later());
  (void)settle();
  json high = pod("high");
  high["spec"]["priorityClassName"] = "high";
  auto actions = add(high);
  // The running low-priority pod is preempted (deleted) for the high one.
  bool deleted = false;
  for (const auto& a : actions)
    deleted = deleted || (a.target().name() == "low" && a.operation() == v1::Action::DELETE);
  EXPECT_TRUE(deleted) << actions.size() << " actions";
  EXPECT_EQ(explain("research/high")["priority"], 100000) << explain("research/high").dump();
}

TEST_F(PodWorkloadsTest, AGlobalDefaultPriorityClassIsThePriorityOfPodsThatNameNone) {
  start(1);
  driver_->object(
      sim::Change::kAdded,
      {{"apiVersion", "scheduling.k8s.io/v1"},
       {"kind", "PriorityClass"},
       {"metadata", {{"name", "normal"}, {"uid", "pc-normal"}, {"resourceVersion", "1"}}},
       {"value", 500},
       {"globalDefault", true}},
      later());
  (void)settle();
  add(pod("first"));
  EXPECT_EQ(explain("research/first")["priority"], 500) << explain("research/first").dump();
  // Gone: back to 0.
  driver_->object(
      sim::Change::kDeleted,
      {{"apiVersion", "scheduling.k8s.io/v1"},
       {"kind", "PriorityClass"},
       {"metadata", {{"name", "normal"}, {"uid", "pc-normal"}, {"resourceVersion", "2"}}},
       {"value", 500},
       {"globalDefault", true}},
      later());
  (void)settle();
  add(pod("second", 2));  // more than the quota: it waits, with the priority it has now
  EXPECT_EQ(explain("research/second")["priority"], 0) << explain("research/second").dump();
}

// Scale-in drains a node only while the PodDisruptionBudget of its pods allows it: the budget
// reaches gpuaasd like any object (the bridge watches PodDisruptionBudgets).
TEST_F(PodWorkloadsTest, APodDisruptionBudgetHoldsADrain) {
  start_with(scaleout::test::pool_policy(0));  // the scale-in tests' pool: one h100 NodePool
  driver_->object(
      sim::Change::kAdded,
      {{"apiVersion", "v1"},
       {"kind", "Node"},
       {"metadata",
        {{"name", "spare"},
         {"labels", {{"gpuaas.io/node-pool", "h100"}, {"nvidia.com/gpu.product", "H100"}}}}},
       {"status",
        {{"allocatable", {{"nvidia.com/gpu", "8"}}},
         {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}},
      later());
  driver_->object(
      sim::Change::kAdded,
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", "cache-0"},
         {"namespace", "default"},
         {"uid", "uid-cache-0"},
         {"labels", {{"app", "cache"}}},
         {"annotations", {{"cluster-autoscaler.kubernetes.io/safe-to-evict", "true"}}}}},
       {"spec", {{"nodeName", "spare"}, {"containers", json::array({{{"name", "c"}}})}}},
       {"status", {{"phase", "Running"}}}},
      later());
  auto budget = [&](int allowed) {
    driver_->object(
        sim::Change::kAdded,
        {{"apiVersion", "policy/v1"},
         {"kind", "PodDisruptionBudget"},
         {"metadata",
          {{"name", "cache"},
           {"namespace", "default"},
           {"uid", "uid-pdb"},
           {"resourceVersion", std::to_string(allowed + 10)}}},
         {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "cache"}}}}}}},
         {"status", {{"disruptionsAllowed", allowed}}}},
        later());
  };
  budget(0);
  auto evictions = [&](std::chrono::seconds span) {
    std::set<std::string> evicted;
    for (Time end = now_ + span; now_ < end;) {
      now_ += std::chrono::seconds(10);
      driver_->tick(now_);
      for (const auto& a : settle())
        if (a.target().kind() == "Eviction") evicted.insert(a.target().name());
    }
    return evicted;
  };
  EXPECT_TRUE(evictions(std::chrono::seconds(300)).empty());
  budget(1);  // the budget's controller says one may go now
  EXPECT_EQ(evictions(std::chrono::seconds(30)), std::set<std::string>{"cache-0"});
}

}  // namespace
}  // namespace gpuaas::core
