// The stand-in operator and scheduler that end-to-end tests run beside the fake API server: the
// pods they make, bind and refuse, and the watch events they leave in the store's history.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_api_store.hpp"
#include "stand_in_operator.hpp"
#include "stand_in_scheduler.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

class StandIns : public ::testing::Test {
 protected:
  StandIns() {
    store_.resources = {{"v1", "Node", "nodes", false},
                        {"v1", "Pod", "pods", true},
                        {"kubeflow.org/v1", "PyTorchJob", "pytorchjobs", true},
                        {"batch/v1", "Job", "jobs", true},
                        {"ray.io/v1", "RayCluster", "rayclusters", true},
                        {"apps/v1", "Deployment", "deployments", true, true}};
  }

  void put(const json& object) {
    std::lock_guard lock(store_.mutex);
    store_.put(object);
  }
  json pod(const std::string& name, const std::string& ns = "team-a") {
    std::lock_guard lock(store_.mutex);
    const auto it = store_.objects.find(FakeStore::Key(1, ns, name));
    return it == store_.objects.end() ? json() : it->second;
  }
  std::size_t pods() {
    std::lock_guard lock(store_.mutex);
    return controller::List(store_, "v1", "Pod").size();
  }
  // Watch events on pods since this resourceVersion, as "TYPE name".
  std::vector<std::string> pod_events(std::uint64_t after) {
    std::lock_guard lock(store_.mutex);
    std::vector<std::string> out;
    for (auto i = store_.first_after(after); i < store_.history.size(); ++i) {
      const auto& c = store_.history[i];
      if (c.resource == 1) out.push_back(c.type + " " + c.object["metadata"].value("name", ""));
    }
    return out;
  }
  std::uint64_t rv() {
    std::lock_guard lock(store_.mutex);
    return store_.rv;
  }

  static json node(const std::string& name, int gpus, json labels = json::object()) {
    labels["kubernetes.io/hostname"] = name;
    return {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"status", {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  }
  static json gpu_pod(const std::string& name, int gpus, json spec = json::object()) {
    spec["containers"] = {
        {{"name", "main"},
         {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}};
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "team-a"}}},
            {"spec", spec},
            {"status", {{"phase", "Pending"}}}};
  }
  static json replica(int replicas, const std::string& pod_set) {
    return {
        {"replicas", replicas},
        {"template",
         {{"metadata", {{"labels", {{"gpuaas.io/pod-set", pod_set}, {"team", "a"}}}}},
          {"spec",
           {{"schedulingGates", {{{"name", "gpuaas.io/placement"}}}},
            {"tolerations", {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}}},
            {"containers",
             {{{"name", "pytorch"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}}}};
  }
  static json pytorch_job(bool suspend) {
    return {{"apiVersion", "kubeflow.org/v1"},
            {"kind", "PyTorchJob"},
            {"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
            {"spec",
             {{"runPolicy", {{"suspend", suspend}}},
              {"pytorchReplicaSpecs",
               {{"Master", replica(1, "master")}, {"Worker", replica(3, "worker")}}}}}};
  }

  FakeStore store_;
};

TEST_F(StandIns, OperatorMakesAPyTorchJobsPodsFromItsTemplatesAndDeletesThemOnSuspend) {
  StandInOperator op(store_);
  put(pytorch_job(true));
  EXPECT_TRUE(op.sync().created.empty()) << "a suspended job has no pods";

  put(pytorch_job(false));
  const auto uid = [&] {
    std::lock_guard lock(store_.mutex);
    return store_.objects.at(FakeStore::Key(2, "team-a", "train"))["metadata"]["uid"];
  }();
  const std::uint64_t before = rv();
  const auto pass = op.sync();
  EXPECT_EQ(pass.created,
            (std::vector<std::string>{"team-a/train-master-0", "team-a/train-worker-0",
                                      "team-a/train-worker-1", "team-a/train-worker-2"}));
  EXPECT_EQ(pod_events(before),
            (std::vector<std::string>{"ADDED train-master-0", "ADDED train-worker-0",
                                      "ADDED train-worker-1", "ADDED train-worker-2"}));
  const json worker = pod("train-worker-2");
  EXPECT_EQ(worker["metadata"]["labels"]["gpuaas.io/pod-set"], "worker");
  EXPECT_EQ(worker["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(worker["metadata"]["labels"]["training.kubeflow.org/replica-index"], "2");
  EXPECT_EQ(worker["spec"]["schedulingGates"], json::parse(R"([{"name":"gpuaas.io/placement"}])"));
  EXPECT_EQ(worker["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(worker["status"]["phase"], "Pending");
  const json owner = worker["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "PyTorchJob");
  EXPECT_EQ(owner["name"], "train");
  EXPECT_EQ(owner["uid"], uid);
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(pod("train-master-0")["metadata"]["labels"]["gpuaas.io/pod-set"], "master");

  const std::uint64_t settled = rv();
  const auto again = op.sync();
  EXPECT_TRUE(again.created.empty() && again.deleted.empty());
  EXPECT_EQ(rv(), settled) << "a pass with nothing to do writes nothing";

  put(pytorch_job(true));
  EXPECT_EQ(op.sync().deleted.size(), 4u);
  EXPECT_EQ(pods(), 0u);
  EXPECT_EQ(pod_events(settled).size(), 4u);
  EXPECT_EQ(pod_events(settled).front(), "DELETED train-master-0");
}

// gpuaasd may resume a workload before a poll loop's next pass sees it suspended; a real
// operator would have seen the suspension and deleted the pods.
TEST_F(StandIns, OperatorRemakesThePodsOfAWorkloadSuspendedAndResumedBetweenPasses) {
  StandInOperator op(store_);
  put(pytorch_job(false));
  ASSERT_EQ(op.sync().created.size(), 4u);
  const json before = pod("train-worker-0");
  put(pytorch_job(true));
  put(pytorch_job(false));
  const auto pass = op.sync();
  EXPECT_EQ(pass.deleted.size(), 4u);
  EXPECT_EQ(pass.created.size(), 4u);
  EXPECT_NE(pod("train-worker-0")["metadata"]["uid"], before["metadata"]["uid"]);
  EXPECT_EQ(pods(), 4u);
  const auto again = op.sync();
  EXPECT_TRUE(again.created.empty() && again.deleted.empty());
}

TEST_F(StandIns, OperatorMakesAHeldBackPodOnlyOnceReleased) {
  StandInOperator op(store_);
  op.hold_back("team-a/train-worker-2");
  put(pytorch_job(false));
  EXPECT_EQ(op.sync().created.size(), 3u);
  EXPECT_TRUE(op.sync().created.empty());
  EXPECT_TRUE(pod("train-worker-2").is_null());
  op.release("team-a/train-worker-2");
  EXPECT_EQ(op.sync().created, std::vector<std::string>{"team-a/train-worker-2"});
}

TEST_F(StandIns, OperatorFollowsJobsRayClustersAndDeployments) {
  StandInOperator op(store_);
  const json tmpl = {{"spec", {{"containers", {{{"name", "c"}}}}}}};
  put({{"apiVersion", "batch/v1"},
       {"kind", "Job"},
       {"metadata", {{"name", "eval"}, {"namespace", "team-a"}}},
       {"spec", {{"parallelism", 3}, {"completions", 2}, {"suspend", false}, {"template", tmpl}}}});
  put({{"apiVersion", "ray.io/v1"},
       {"kind", "RayCluster"},
       {"metadata", {{"name", "rc"}, {"namespace", "team-a"}}},
       {"spec",
        {{"headGroupSpec", {{"template", tmpl}}},
         {"workerGroupSpecs",
          {{{"groupName", "GPU"}, {"replicas", 5}, {"maxReplicas", 2}, {"template", tmpl}}}}}}});
  put({{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata", {{"name", "serve"}, {"namespace", "team-a"}}},
       {"spec", {{"replicas", 2}, {"template", tmpl}}}});
  EXPECT_EQ(op.sync().created,
            (std::vector<std::string>{"team-a/eval-main-0", "team-a/eval-main-1",
                                      "team-a/rc-head-0", "team-a/rc-gpu-0", "team-a/rc-gpu-1",
                                      "team-a/serve-main-0", "team-a/serve-main-1"}));
  EXPECT_EQ(pod("rc-gpu-1")["metadata"]["labels"]["ray.io/cluster"], "rc");
  EXPECT_EQ(pod("eval-main-0")["metadata"]["labels"]["job-name"], "eval");

  // A pod deleted from under a running workload is made again; a scaled-down one goes.
  {
    std::lock_guard lock(store_.mutex);
    store_.remove("v1", "Pod", "team-a", "serve-main-0");
  }
  put({{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata", {{"name", "serve"}, {"namespace", "team-a"}}},
       {"spec", {{"replicas", 1}, {"template", tmpl}}}});
  const auto pass = op.sync();
  EXPECT_EQ(pass.created, std::vector<std::string>{"team-a/serve-main-0"});
  EXPECT_EQ(pass.deleted, std::vector<std::string>{"team-a/serve-main-1"});

  // The garbage collector's part: the cluster's pods go with it.
  {
    std::lock_guard lock(store_.mutex);
    store_.remove("ray.io/v1", "RayCluster", "team-a", "rc");
  }
  EXPECT_EQ(op.sync().deleted.size(), 3u);
  EXPECT_TRUE(pod("rc-head-0").is_null());
}

TEST_F(StandIns, ControllerRequestsLeaveInjectedFailuresToTheClientUnderTest) {
  store_.required_token = "secret";
  store_.failures.push_back({"POST", "/api/v1/namespaces/team-a/pods", 500, ""});
  put(pytorch_job(false));
  EXPECT_EQ(StandInOperator(store_).sync().created.size(), 4u);
  EXPECT_EQ(store_.failures.size(), 1u);
  EXPECT_TRUE(store_.requests.empty());
}

TEST_F(StandIns, SchedulerBindsAnUngatedPodToTheNodeItsSelectorNames) {
  put(node("gpu-a", 4));
  put(node("gpu-b", 4));
  json spec = {{"nodeSelector", {{"kubernetes.io/hostname", "gpu-b"}}}};
  put(gpu_pod("p", 2, spec));
  StandInScheduler scheduler(store_);
  const std::uint64_t before = rv();
  const auto pass = scheduler.sync();
  ASSERT_EQ(pass.bound.size(), 1u);
  EXPECT_EQ(pass.bound[0].node, "gpu-b");
  EXPECT_EQ(scheduler.node_of("team-a", "p"), "gpu-b");
  EXPECT_EQ(scheduler.placements().at("team-a/p"), "gpu-b");
  const json p = pod("p");
  EXPECT_EQ(p["spec"]["nodeName"], "gpu-b");
  EXPECT_EQ(p["status"]["phase"], "Running");
  EXPECT_EQ(p["status"]["conditions"][0]["type"], "PodScheduled");
  EXPECT_EQ(p["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(pod_events(before), (std::vector<std::string>{"MODIFIED p", "MODIFIED p"}));
  EXPECT_TRUE(scheduler.sync().bound.empty()) << "a bound pod stays where it is";
}

TEST_F(StandIns, SchedulerOrsAffinityTermsAndAndsTheirExpressions) {
  put(node("a", 8, {{"zone", "z1"}}));
  put(node("b", 8, {{"zone", "z2"}, {"spot", "true"}}));
  put(node("c", 8, {{"zone", "z2"}}));
  const auto required = [](const json& terms) {
    return json{
        {"affinity",
         {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
  };
  const auto expr = [](const std::string& key, const std::string& op, json values = nullptr) {
    json e = {{"key", key}, {"operator", op}};
    if (!values.is_null()) e["values"] = values;
    return e;
  };
  // Term 1 matches no node (zone z1 AND hostname c); term 2 only c (z2, not spot).
  put(gpu_pod("ored", 1,
              required(json::array(
                  {{{"matchExpressions",
                     {expr("zone", "In", {"z1"}), expr("kubernetes.io/hostname", "In", {"c"})}}},
                   {{"matchExpressions",
                     {expr("zone", "NotIn", {"z1"}), expr("spot", "DoesNotExist")}}}}))));
  // Only b has the spot label; a nodeSelector must hold as well.
  json spot = required(json::array({{{"matchExpressions", {expr("spot", "Exists")}}}}));
  spot["nodeSelector"] = {{"zone", "z2"}};
  put(gpu_pod("spot", 1, spot));
  put(gpu_pod("nowhere", 1,
              required(json::array({{{"matchExpressions",
                                      {expr("zone", "In", {"z1"}), expr("spot", "Exists")}}}}))));
  StandInScheduler scheduler(store_);
  const auto pass = scheduler.sync();
  EXPECT_EQ(scheduler.node_of("team-a", "ored"), "c");
  EXPECT_EQ(scheduler.node_of("team-a", "spot"), "b");
  EXPECT_EQ(scheduler.node_of("team-a", "nowhere"), "");
  EXPECT_EQ(pass.unschedulable, std::vector<std::string>{"team-a/nowhere"});
  EXPECT_EQ(pod("nowhere")["status"]["conditions"][0]["message"],
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.");
}

TEST_F(StandIns, SchedulerLeavesAPodUnschedulableWhileNoNodeHasItsGpusFree) {
  put(node("gpu-a", 4));
  put(node("cpu-a", 0));
  json busy = gpu_pod("busy", 3, {{"nodeName", "gpu-a"}});
  busy["status"]["phase"] = "Running";
  put(busy);
  put(gpu_pod("waits", 2));
  StandInScheduler scheduler(store_);
  EXPECT_EQ(scheduler.sync().unschedulable, std::vector<std::string>{"team-a/waits"});
  const json condition = pod("waits")["status"]["conditions"][0];
  EXPECT_EQ(condition["type"], "PodScheduled");
  EXPECT_EQ(condition["status"], "False");
  EXPECT_EQ(condition["reason"], "Unschedulable");
  EXPECT_EQ(condition["message"], "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  EXPECT_TRUE(pod("waits")["spec"].value("nodeName", "").empty());

  const std::uint64_t settled = rv();
  scheduler.sync();
  EXPECT_EQ(rv(), settled) << "the same verdict again changes no resourceVersion";

  busy["status"]["phase"] = "Succeeded";  // a finished pod holds no GPUs
  put(busy);
  ASSERT_EQ(scheduler.sync().bound.size(), 1u);
  EXPECT_EQ(pod("waits")["spec"]["nodeName"], "gpu-a");
  EXPECT_EQ(pod("waits")["status"]["conditions"].size(), 1u);
  EXPECT_EQ(pod("waits")["status"]["conditions"][0]["status"], "True");
}

TEST_F(StandIns, SchedulerNeverBindsAGatedPodUntilItsGateIsRemoved) {
  put(node("gpu-a", 8));
  put(node("gpu-b", 8));
  put(pytorch_job(false));
  StandInOperator op(store_);
  StandInScheduler scheduler(store_);
  op.sync();
  const std::uint64_t before = rv();
  const auto pass = scheduler.sync();
  EXPECT_TRUE(pass.bound.empty() && pass.unschedulable.empty());
  EXPECT_EQ(rv(), before) << "gated pods are not touched";

  // What gpuaasd's admission does: drop the gate and narrow the pod to a node.
  {
    std::lock_guard lock(store_.mutex);
    const json p = store_.objects.at(FakeStore::Key(1, "team-a", "train-worker-1"));
    const json patch = {
        {"spec",
         {{"schedulingGates", nullptr}, {"nodeSelector", {{"kubernetes.io/hostname", "gpu-b"}}}}}};
    ASSERT_EQ(controller::MergePatch(store_, p, patch).status, 200);
  }
  const auto released = scheduler.sync();
  ASSERT_EQ(released.bound.size(), 1u);
  EXPECT_EQ(released.bound[0].name, "train-worker-1");
  EXPECT_EQ(scheduler.node_of("team-a", "train-worker-1"), "gpu-b");
  EXPECT_TRUE(pod("train-worker-0")["spec"].value("nodeName", "").empty());
}

TEST_F(StandIns, SchedulerKeepsToCordonsAndTaints) {
  json cordoned = node("cordoned", 8);
  cordoned["spec"]["unschedulable"] = true;
  put(cordoned);
  json tainted = node("tainted", 8);
  tainted["spec"]["taints"] = {
      {{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}};
  put(tainted);
  put(gpu_pod("plain", 1));
  put(gpu_pod("tolerant", 1,
              {{"tolerations", {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}}}}));
  StandInScheduler scheduler(store_);
  scheduler.sync();
  EXPECT_EQ(scheduler.node_of("team-a", "tolerant"), "tainted");
  EXPECT_EQ(pod("plain")["status"]["conditions"][0]["message"],
            "0/2 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 1 "
            "node(s) were unschedulable.");
}

}  // namespace
}  // namespace gpuaas::bridge
