// Idle reclaim as a user meets it: gpuaasd with an IdleReclaimPolicy, a NotebookPolicy and the
// plugins on a real nats-server, everything through gpuaasctl. An idle RayCluster goes to zero
// with its quota kept, then released; a lent reservation is taken back when Ray work arrives;
// notebooks are held until admitted. Durations are seconds so that each test stays short.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon_e2e.hpp"

namespace gpuaas::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Two ClusterQueues in one cohort (serve lends what its Ray cluster leaves idle, batch has no
// GPUs of its own) and one for notebooks alone.
std::string policy(bool lend, const std::string& keep_quota_for) {
  std::string out = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
)";
  auto cq = [&](const std::string& name, const std::string& cohort, int gpus) {
    out += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: " + name +
           "}\nspec:\n  namespaceSelector: {}\n" +
           (cohort.empty() ? "" : "  cohort: " + cohort + "\n") +
           "  resourceGroups:\n  - coveredResources: [\"cpu\", \"memory\", \"nvidia.com/gpu\"]\n"
           "    flavors:\n    - name: h100\n      resources:\n"
           "      - {name: cpu, nominalQuota: 32}\n      - {name: memory, nominalQuota: 256Gi}\n"
           "      - {name: nvidia.com/gpu, nominalQuota: " +
           std::to_string(gpus) + "}\n";
  };
  cq("serve", "pool", 2);
  cq("batch", "pool", 0);
  cq("notebooks", "", 1);
  for (const char* lq : {"main:serve", "batch:batch", "notebooks:notebooks"}) {
    std::string s = lq;
    out += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: " +
           s.substr(0, s.find(':')) +
           ", namespace: team-a}\nspec: {clusterQueue: " + s.substr(s.find(':') + 1) + "}\n";
  }
  out += R"(---
apiVersion: gpuaas.io/v1alpha1
kind: IdleReclaimPolicy
metadata: {name: ray}
spec:
  selector: {kinds: [RayCluster], clusterQueues: [serve]}
  idle:
    window: 2s
    thresholds:
    - {metric: DCGM_FI_DEV_GPU_UTIL, below: 5}
  action: ScaleToZero
  gracePeriod: 0s
  stabilizationWindow: 0s
  minRuntime: 0s
  keepQuotaFor: )" +
         keep_quota_for + "\n  cooldown: 0s\n  lendIdleQuota: " + (lend ? "true" : "false") +
         R"(
---
apiVersion: gpuaas.io/v1alpha1
kind: NotebookPolicy
metadata: {name: notebooks}
spec:
  selector: {clusterQueues: [notebooks]}
  gate: true
  maxWait: 2s
)";
  return out;
}

constexpr const char* kNode = R"(apiVersion: v1
kind: Node
metadata:
  name: h100-a
  labels: {kubernetes.io/hostname: h100-a, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  capacity: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8"}
  allocatable: {cpu: "94", memory: 1000Gi, nvidia.com/gpu: "8"}
  conditions:
  - {type: Ready, status: "True"}
)";

constexpr const char* kRay = "chat-ray";
constexpr const char* kWorkerPod = "chat-ray-gpu-worker-x7k2p";

// The RayCluster: a head without GPUs and one worker of 2 GPUs. `scaled_from` is the annotation
// of a scale-to-zero patch, applied as the bridge would (replicas 0, the record kept).
std::string ray_cluster(bool running, int rv, const std::string& scaled_from = "") {
  const std::string workers = scaled_from.empty() ? "1" : "0";
  return std::string("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: ") + kRay +
         "\n  namespace: team-a\n  uid: 5d7c9a1e-0000-4000-8000-000000000001\n"
         "  resourceVersion: \"" +
         std::to_string(rv) + "\"\n  labels: {kueue.x-k8s.io/queue-name: main}\n" +
         (scaled_from.empty()
              ? ""
              : "  annotations:\n    gpuaas.io/scaled-from: " + json(scaled_from).dump() + "\n") +
         "spec:\n  suspend: " + (running ? "false" : "true") +
         "\n  headGroupSpec:\n    rayStartParams: {}\n    template:\n      spec:\n"
         "        containers:\n        - name: ray-head\n          image: rayproject/ray:2.9.0\n"
         "          resources:\n            requests: {cpu: \"2\", memory: 8Gi}\n"
         "  workerGroupSpecs:\n  - groupName: gpu-workers\n    replicas: " +
         workers + "\n    minReplicas: " + workers +
         "\n    maxReplicas: 1\n    rayStartParams: {}\n    template:\n      spec:\n"
         "        containers:\n        - name: ray-worker\n"
         "          image: rayproject/ray:2.9.0-gpu\n          resources:\n"
         "            limits: {nvidia.com/gpu: \"2\", cpu: \"8\", memory: 32Gi}\n" +
         (running ? "status: {state: ready}\n" : "");
}

std::string ray_pod(const std::string& name, bool gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  ownerReferences:\n"
         "  - {apiVersion: ray.io/v1, kind: RayCluster, name: chat-ray, "
         "uid: 5d7c9a1e-0000-4000-8000-000000000001, controller: true}\n"
         "spec:\n  nodeName: h100-a\n  containers:\n  - name: ray\n    resources:\n" +
         (gpus ? "      limits: {nvidia.com/gpu: \"2\", cpu: \"8\", memory: 32Gi}\n"
               : "      requests: {cpu: \"2\", memory: 8Gi}\n") +
         "status: {phase: Running}\n";
}

// A dcgm-exporter scrape of the worker's two GPUs, both idle.
std::string idle_scrape() {
  std::string out = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  for (int g = 0; g < 2; ++g)
    out += "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + std::to_string(g) +
           "\",Hostname=\"h100-a\",namespace=\"team-a\",pod=\"" + kWorkerPod + "\"} 0\n";
  return out;
}

// `running`: the admit patch applied as the bridge would (a preemption is a patch against it);
// `rv`: newer versions of the object carry a higher resourceVersion.
std::string job(const std::string& name, const std::string& queue, int gpus, bool running = false,
                int rv = 1) {
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  resourceVersion: \"" + std::to_string(rv) +
         "\"\n  labels: {kueue.x-k8s.io/queue-name: " + queue +
         "}\nspec:\n  runPolicy: {suspend: " + (running ? "false" : "true") +
         "}\n  pytorchReplicaSpecs:\n    Master:\n"
         "      replicas: 1\n      template:\n        spec:\n          containers:\n"
         "          - name: pytorch\n            image: example/train:1\n"
         "            resources:\n              limits: {nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\", cpu: \"4\", memory: 16Gi}\n";
}

// A notebook started by its user (no stop annotation) in the gated queue; `stopped`: the gate's
// stop annotation applied as the bridge would.
std::string notebook(const std::string& name, const std::string& stopped = "") {
  return "apiVersion: kubeflow.org/v1\nkind: Notebook\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  resourceVersion: \"" + (stopped.empty() ? "1" : "2") +
         "\"\n  labels: {kueue.x-k8s.io/queue-name: notebooks}\n" +
         (stopped.empty()
              ? ""
              : "  annotations: {kubeflow-resource-stopped: " + json(stopped).dump() + "}\n") +
         "spec:\n  template:\n    spec:\n      containers:\n      - name: " + name +
         "\n        image: kubeflownotebookswg/jupyter-pytorch-cuda-full:v1.8.0\n"
         "        resources:\n          limits: {nvidia.com/gpu: \"1\", cpu: \"2\", "
         "memory: 8Gi}\n";
}

class ReclaimEndToEnd : public DaemonEndToEnd {
 protected:
  ReclaimEndToEnd() : DaemonEndToEnd("rcl") {}

  // The RayCluster admitted, then running with its pods while dcgm-exporter reports its GPUs idle
  // (a scrape every half second, as a scraper would), until it is scaled to zero. Returns the
  // scale-to-zero action; the bridge's side (the patch applied, the worker pod gone) is played.
  json run_ray_until_idle() {
    EXPECT_EQ(apply("node.yaml", kNode), 0);
    EXPECT_EQ(apply("ray-1.yaml", ray_cluster(false, 1)), 0);
    json admit = await_action(kRay, "admission/quota");
    EXPECT_FALSE(admit.is_null()) << actions_->dump() << log();
    EXPECT_EQ(admit["body"]["spec"]["suspend"], false) << admit.dump();
    EXPECT_EQ(apply("ray-2.yaml", ray_cluster(true, 2)), 0);
    EXPECT_EQ(apply("pods.yaml",
                    ray_pod("chat-ray-head-abcde", false) + "---\n" + ray_pod(kWorkerPod, true)),
              0);
    const std::string scrape = write("idle.prom", idle_scrape());
    json zero;
    auto last_push = std::chrono::steady_clock::now() - seconds(1);
    eventually(
        [&] {
          if (std::chrono::steady_clock::now() - last_push >= milliseconds(500)) {
            ctl("push-metrics " + scrape + " >/dev/null");
            last_push = std::chrono::steady_clock::now();
          }
          return !(zero = actions_->find(kRay, "reclaim/idle")).is_null();
        },
        seconds(30));
    if (zero.is_null()) {
      ADD_FAILURE() << "no scale to zero\n" << actions_->dump() << log();
      return zero;
    }
    const json patched = zero["body"]["metadata"]["annotations"]["gpuaas.io/scaled-from"];
    EXPECT_TRUE(patched.is_string()) << zero.dump();
    if (patched.is_string()) {
      EXPECT_EQ(apply("ray-3.yaml", ray_cluster(true, 3, patched.get<std::string>())), 0);
    }
    EXPECT_EQ(ctl("delete -f " + write("worker.yaml", ray_pod(kWorkerPod, true)) + " >/dev/null")
                  .exit_code,
              0);
    return zero;
  }
};

TEST_F(ReclaimEndToEnd, IdleRayClusterGoesToZeroKeepsItsQuotaThenReleasesIt) {
  start_daemon(policy(false, "6s"));
  const json zero = run_ray_until_idle();
  ASSERT_FALSE(zero.is_null());
  EXPECT_EQ(zero["operation"], "MERGE_PATCH") << zero.dump();
  const json& group = zero["body"]["spec"]["workerGroupSpecs"][0];
  EXPECT_EQ(group["replicas"], 0) << zero.dump();
  EXPECT_EQ(group["minReplicas"], 0) << zero.dump();
  EXPECT_NE(zero["reason"].get<std::string>().find("idle for"), std::string::npos) << zero.dump();

  // At zero, the quota stays reserved: nobody else takes the 2 GPUs meanwhile.
  json x = explain("team-a/chat-ray");
  ASSERT_TRUE(x.is_object()) << log();
  EXPECT_EQ(x["state"], "ScaledToZero") << x.dump();
  EXPECT_EQ(x["quota_reserved_idle"], true) << x.dump();
  EXPECT_EQ(x["reclaim"]["state"], "AtZero") << x.dump();
  EXPECT_EQ(x["reclaim"]["quota"], "Reserved") << x.dump();
  EXPECT_EQ(x["reclaim"]["rule"], "IdleReclaimPolicy/ray") << x.dump();
  EXPECT_TRUE(x["reclaim"]["reserved_until"].is_string()) << x.dump();
  EXPECT_EQ(usage("serve", "nvidia.com/gpu"), "2");
  // The same as a person reads it.
  const auto text = ctl("explain team-a/chat-ray");
  EXPECT_NE(text.out.find("Quota:           Reserved until"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Idle reclaim:    AtZero (IdleReclaimPolicy/ray)"), std::string::npos)
      << text.out;

  // After keepQuotaFor (6 s, checked at the daemon's next look) the reservation ends.
  ASSERT_TRUE(eventually(
      [&] {
        x = explain("team-a/chat-ray");
        return x.is_object() && x["reason"] == "QuotaReleased";
      },
      seconds(20)))
      << x.dump() << log();
  EXPECT_EQ(x["reclaim"]["state"], "Released") << x.dump();
  EXPECT_EQ(x["reclaim"]["quota"], "Released") << x.dump();
  EXPECT_TRUE(eventually([&] { return usage("serve", "nvidia.com/gpu") == "0"; }))
      << ctl("state --json").out;
  EXPECT_EQ(daemon_->stop(), 0);
}

TEST_F(ReclaimEndToEnd, NotebooksStartedWithoutAdmissionAreStoppedAndQueued) {
  start_daemon(policy(true, "30s"));
  ASSERT_EQ(apply("node.yaml", kNode), 0);
  // The notebooks' only GPU goes to a training job first.
  ASSERT_EQ(apply("holder.yaml", job("holder", "notebooks", 1)), 0);
  ASSERT_FALSE(await_action("holder", "admission/quota").is_null()) << log();

  ASSERT_EQ(apply("nb-1.yaml", notebook("nb-1")), 0);
  json gate = await_action("nb-1", "notebook/gate");
  ASSERT_FALSE(gate.is_null()) << actions_->dump() << log();
  EXPECT_EQ(gate["operation"], "MERGE_PATCH") << gate.dump();
  const json stop = gate["body"]["metadata"]["annotations"]["kubeflow-resource-stopped"];
  ASSERT_TRUE(stop.is_string()) << gate.dump();
  ASSERT_EQ(apply("nb-1b.yaml", notebook("nb-1", stop.get<std::string>())), 0);
  json x;
  ASSERT_TRUE(eventually([&] {
    x = explain("team-a/nb-1");
    return x.is_object() && x["state"] == "Pending";
  })) << x.dump();
  EXPECT_EQ(x["position"]["cluster_queue"], 0) << x.dump();
  EXPECT_EQ(x["cluster_queue"], "notebooks") << x.dump();

  ASSERT_EQ(apply("nb-2.yaml", notebook("nb-2")), 0);
  ASSERT_FALSE(await_action("nb-2", "notebook/gate").is_null()) << actions_->dump();
  ASSERT_TRUE(eventually([&] {
    x = explain("team-a/nb-2");
    return x.is_object() && x["state"] == "Pending";
  })) << x.dump();
  EXPECT_EQ(x["position"]["cluster_queue"], 1) << x.dump();

  // maxWait (2 s) passes on the daemon's clock: the wait is reported.
  EXPECT_TRUE(eventually([&] {
    return log().find("waited longer than maxWait") != std::string::npos;
  })) << log();

  // The job ends: its GPU goes to the first notebook, which is started again.
  ASSERT_EQ(ctl("delete -f " + write("holder.yaml", job("holder", "notebooks", 1)) + " >/dev/null")
                .exit_code,
            0);
  json admit = await_action("nb-1", "admission/quota");
  ASSERT_FALSE(admit.is_null()) << actions_->dump() << log();
  // Started again: the stop annotation is removed.
  const json& annotations = admit["body"]["metadata"]["annotations"];
  EXPECT_TRUE(annotations.contains("kubeflow-resource-stopped") &&
              annotations["kubeflow-resource-stopped"].is_null())
      << admit.dump();
  EXPECT_TRUE(eventually([&] { return explain("team-a/nb-1")["state"] == "Admitted"; }));
  EXPECT_EQ(explain("team-a/nb-2")["position"]["cluster_queue"], 0);
  EXPECT_TRUE(actions_->find("nb-2", "admission/quota").is_null()) << actions_->dump();
  EXPECT_EQ(daemon_->stop(), 0);
}

TEST_F(ReclaimEndToEnd, RayWorkWakesALentClusterAndTheBorrowerIsPreempted) {
  start_daemon(policy(true, "60s"));
  const json zero = run_ray_until_idle();
  ASSERT_FALSE(zero.is_null());
  json x = explain("team-a/chat-ray");
  EXPECT_EQ(x["reclaim"]["quota"], "Lent") << x.dump();
  EXPECT_EQ(usage("serve", "nvidia.com/gpu"), "0");  // a lent reservation is out of the usage

  // Batch has no GPUs of its own: it runs on the cluster's lent quota.
  ASSERT_EQ(apply("borrower.yaml", job("borrower", "batch", 2)), 0);
  ASSERT_FALSE(await_action("borrower", "admission/quota").is_null()) << actions_->dump() << log();
  ASSERT_EQ(apply("borrower-2.yaml", job("borrower", "batch", 2, true, 2)), 0);
  EXPECT_TRUE(eventually([&] { return usage("batch", "nvidia.com/gpu") == "2"; }))
      << ctl("state --json").out;

  // A task waits for a node on the cluster: it is asked for while at zero.
  ASSERT_EQ(ctl("push-metrics " +
                write("tasks.prom",
                      "# TYPE ray_tasks gauge\nray_tasks{State=\"PENDING_NODE_ASSIGNMENT\","
                      "Name=\"f\",namespace=\"team-a\",ray_io_cluster=\"chat-ray\"} 1\n") +
                " >/dev/null")
                .exit_code,
            0);
  json preempt = await_action("borrower", "reclaim/lend");
  ASSERT_FALSE(preempt.is_null()) << actions_->dump() << log();
  EXPECT_EQ(preempt["body"]["spec"]["runPolicy"]["suspend"], true) << preempt.dump();
  // The borrower holds the quota until it is seen stopped: the cluster waits to scale back.
  x = explain("team-a/chat-ray");
  EXPECT_EQ(x["state"], "Waking") << x.dump();
  EXPECT_EQ(x["reclaim"]["quota"], "Returning") << x.dump();
  EXPECT_NE(x["reclaim"]["reason"].get<std::string>().find("tasks waiting"), std::string::npos)
      << x.dump();
  EXPECT_TRUE(actions_->find(kRay, "reclaim/wake").is_null()) << actions_->dump();
  // The bridge stops it: its borrowed quota returns, it queues again, and the cluster is back.
  ASSERT_EQ(apply("borrower-3.yaml", job("borrower", "batch", 2, false, 3)), 0);
  json back = await_action(kRay, "reclaim/wake");
  ASSERT_FALSE(back.is_null()) << actions_->dump() << log();
  const json& group = back["body"]["spec"]["workerGroupSpecs"][0];
  EXPECT_EQ(group["replicas"], 1) << back.dump();
  EXPECT_EQ(group["minReplicas"], 1) << back.dump();
  EXPECT_NE(back["reason"].get<std::string>().find("lent quota is back"), std::string::npos)
      << back.dump();

  x = explain("team-a/chat-ray");
  EXPECT_EQ(x["state"], "Admitted") << x.dump();
  EXPECT_EQ(x["quota_reserved_idle"], false) << x.dump();
  EXPECT_EQ(x["reclaim"]["state"], "Active") << x.dump();
  EXPECT_TRUE(x["reclaim"]["woken_at"].is_string()) << x.dump();
  EXPECT_TRUE(eventually([&] { return usage("batch", "nvidia.com/gpu") == "0"; }))
      << ctl("state --json").out;
  EXPECT_EQ(usage("serve", "nvidia.com/gpu"), "2");
  EXPECT_TRUE(eventually([&] { return explain("team-a/borrower")["state"] == "Pending"; }))
      << explain("team-a/borrower").dump();
  // Waking, its worker not back yet: no cooldown, yet not idle again (two of the daemon's looks;
  // the one task sample is older than the window by then).
  std::this_thread::sleep_for(seconds(11));
  int zeros = 0;
  for (const auto& a : actions_->all())
    if (a["target"]["name"] == kRay && a["rule"] == "reclaim/idle") ++zeros;
  EXPECT_EQ(zeros, 1) << actions_->dump();
  EXPECT_EQ(daemon_->stop(), 0);
}

// A RayCluster already running when gpuaasd first sees it (it ran before gpuaas) is adopted by
// admission ("admission/adopted"); idle reclaim watches it like one gpuaas admitted.
TEST_F(ReclaimEndToEnd, AClusterRunningBeforeAdmissionIsReclaimedToo) {
  start_daemon(policy(false, "60s"));
  ASSERT_EQ(apply("node.yaml", kNode), 0);
  ASSERT_EQ(apply("ray.yaml", ray_cluster(true, 1)), 0);
  ASSERT_EQ(apply("pods.yaml",
                  ray_pod("chat-ray-head-abcde", false) + "---\n" + ray_pod(kWorkerPod, true)),
            0);
  ASSERT_TRUE(eventually([&] { return explain("team-a/chat-ray")["state"] == "Admitted"; }));
  const std::string scrape = write("idle.prom", idle_scrape());
  json zero;
  eventually(
      [&] {
        ctl("push-metrics " + scrape + " >/dev/null");
        std::this_thread::sleep_for(milliseconds(500));
        return !(zero = actions_->find(kRay, "reclaim/idle")).is_null();
      },
      seconds(20));
  EXPECT_FALSE(zero.is_null()) << explain("team-a/chat-ray").dump();
  EXPECT_TRUE(explain("team-a/chat-ray").contains("reclaim"));
  EXPECT_EQ(daemon_->stop(), 0);
}

}  // namespace
}  // namespace gpuaas::testing
