// The whole loop as a platform team runs it, with the Kubernetes API faked in-process: the
// gpuaas-bridge executable watches the fake API server and publishes what it sees; a real gpuaasd
// on a real nats-server admits the queued RayJob; the bridge applies the admission, reports the
// result, creates the Kubernetes Event and writes the status annotation. Then the bridge is
// killed and restarted (nothing applied twice) and a deletion missed during a watch gap comes
// through a relist.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "bridge_e2e_fixture.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "stand_in_scheduler.hpp"

namespace gpuaas::testing {
namespace {

// Merge patches that resumed the RayJob (the admission), as the API server received them.
std::size_t admissions(const bridge::FakeApiServer& api, const std::string& name) {
  std::size_t n = 0;
  for (const auto& r : api.requests()) {
    if (r.method != "PATCH" || r.path.find("/rayjobs/" + name) == std::string::npos) continue;
    auto body = json::parse(r.body, nullptr, false);
    n += body.is_object() && body.contains("spec") && body["spec"].value("suspend", true) == false;
  }
  return n;
}

TEST_F(BridgeEndToEnd, QueuedRayJobIsAdmittedThroughTheBridgeOnce) {
  start_daemon(kH100QueuePolicy);
  api_->put(yaml_json(kH100Node));
  json job = first_manifest("kuberay/ray-job.sample.yaml");
  ASSERT_TRUE(job.is_object());
  job["metadata"]["namespace"] = "team-a";
  job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "main";
  job["spec"]["suspend"] = true;  // what the webhook does at creation
  api_->put(job);
  start_bridge("bridge.log");

  // The admission travels: fake API -> bridge -> NATS -> gpuaasd -> action -> bridge -> fake API.
  ASSERT_TRUE(eventually(
      [&] {
        auto o = api_->get("ray.io/v1", "RayJob", "team-a", "rayjob-sample");
        return o && (*o)["spec"].value("suspend", true) == false;
      },
      seconds(30)))
      << "bridge:\n"
      << bridge_->log() << "\ngpuaasd:\n"
      << log();
  // The status annotation the bridge writes may land between the decision and its patch: the
  // patch then meets a 409 and gpuaasd patches again on the newer version (one more request).
  const std::size_t patches = admissions(*api_, "rayjob-sample");
  EXPECT_GE(patches, 1u);
  EXPECT_LE(patches, 4u) << log();
  if (patches > 1) {
    EXPECT_NE(log().find("patching again"), std::string::npos) << log();
  }

  // The user sees it: a Kubernetes Event on the job, and the daemon learned the outcome.
  ASSERT_TRUE(eventually([&] {
    for (const auto& r : api_->requests()) {
      if (r.method == "POST" && r.path == "/api/v1/namespaces/team-a/events" &&
          json::parse(r.body, nullptr, false).value("reason", "") == "Admitted")
        return true;
    }
    return false;
  })) << bridge_->log();
  // ... and exactly one admission was applied; the others met a conflict and were reported so.
  json results;
  ASSERT_TRUE(eventually([&] {
    auto st = json::parse(ctl("state --json").out, nullptr, false);
    if (!st.is_object()) return false;
    results = st["intake"]["action_results"];
    return results["applied"].get<std::size_t>() + results["conflict"].get<std::size_t>() ==
           patches;
  })) << log();
  EXPECT_EQ(results["applied"], 1) << results.dump();

  // Killed and started again: the action is redelivered or read again, and not applied twice.
  bridge_->stop(SIGKILL);
  start_bridge("bridge2.log");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // its watches and consumer come back
  ASSERT_TRUE(api_->wait_for_watches(4, 10000)) << bridge_->log();
  EXPECT_EQ(admissions(*api_, "rayjob-sample"), patches) << bridge_->log();

  // A deletion during a watch gap the server no longer has history for: the relist finds the
  // job gone, the bridge publishes DELETED, and the daemon forgets the workload.
  const auto uid = api_->get("ray.io/v1", "RayJob", "team-a", "rayjob-sample")
                       .value()["metadata"]["uid"]
                       .get<std::string>();
  {
    auto before = explain("team-a/rayjob-sample");
    ASSERT_TRUE(before.is_object() && before.contains("workload")) << before.dump();
  }
  api_->gone_as_error_event(false);
  api_->remove("ray.io/v1", "RayJob", "team-a", "rayjob-sample");
  api_->forget_history_before(api_->resource_version());
  api_->close_watches();
  ASSERT_TRUE(eventually(
      [&] {
        auto e = explain("team-a/rayjob-sample");
        return e.is_null() || !e.contains("workload");
      },
      seconds(20)))
      << bridge_->log();

  // The DELETED event in the stream carries its own Nats-Msg-Id (uid.rv.DELETED).
  bus::NatsOptions o;
  o.url = url();
  auto b = bus::connect_nats(o);
  ASSERT_TRUE(b);
  std::string prefix = root_;
  for (auto& c : prefix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto reader = (*b)->open_reader(prefix + "_EVENTS", 1);
  ASSERT_TRUE(reader) << reader.status().message();
  bool deleted = false;
  for (int round = 0; round < 50 && !deleted; ++round) {
    auto batch = (*reader)->fetch(256, std::chrono::milliseconds(200));
    if (!batch || (*batch)->size() == 0) break;
    for (std::size_t i = 0; i < (*batch)->size(); ++i) {
      v1::Event ev;
      if (!wire::decode_event((*batch)->data(i), (*batch)->header(i, "content-type"), ev)) continue;
      if (ev.has_object() && ev.object().type() == v1::ObjectEvent::DELETED &&
          ev.id().rfind(uid + ".", 0) == 0 && ev.id().size() > 8 &&
          ev.id().substr(ev.id().size() - 8) == ".DELETED")
        deleted = true;
    }
  }
  EXPECT_TRUE(deleted) << bridge_->log();
  EXPECT_EQ(bridge_->stop(SIGTERM), 0) << bridge_->log();
}

// A plain Pod, gated as the webhook leaves it: gpuaasd's pod plugin admits it and the bridge
// applies the patch that opens the admission gate (the other gate stays), as kube-scheduler then
// needs to schedule it.
TEST_F(BridgeEndToEnd, AGatedPodIsReleasedThroughTheBridge) {
  start_daemon(kH100QueuePolicy);
  api_->put(yaml_json(kH100Node));
  api_->put(yaml_json(R"(apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: main}
spec:
  schedulingGates: [{name: kueue.x-k8s.io/admission}, {name: example.com/other}]
  containers:
  - name: main
    image: busybox
    resources: {limits: {nvidia.com/gpu: "1", cpu: "1", memory: 1Gi}}
status: {phase: Pending}
)"));
  start_bridge("bridge.log");
  ASSERT_TRUE(eventually(
      [&] {
        auto o = api_->get("v1", "Pod", "team-a", "solo");
        if (!o) return false;
        const json gates = (*o)["spec"].value("schedulingGates", json::array());
        return gates.size() == 1 && gates[0].value("name", "") == "example.com/other";
      },
      seconds(30)))
      << "bridge:\n"
      << bridge_->log() << "\ngpuaasd:\n"
      << log();
  EXPECT_EQ(bridge_->stop(SIGTERM), 0) << bridge_->log();
}

// Placement that binds, on the stand-in cluster: the Pod's admission narrows it to the node the
// daemon placed it on, and a scheduler that honours nodeSelector puts it there. Best fit places
// a 4-GPU pod on the 4-GPU node; without the narrowing the stand-in scheduler (first fitting
// node by name) would take the 8-GPU one.
TEST_F(BridgeEndToEnd, APlainPodRunsWhereTheDaemonPlacedIt) {
  start_daemon(h100_queue_policy_12());
  for (const auto& [name, gpus] : {std::pair{"h100-a", "8"}, std::pair{"h100-b", "4"}}) {
    json n = yaml_json(kH100Node);
    n["metadata"]["name"] = name;
    n["metadata"]["labels"]["kubernetes.io/hostname"] = std::string("host-") + name;
    n["status"]["capacity"]["nvidia.com/gpu"] = gpus;
    n["status"]["allocatable"]["nvidia.com/gpu"] = gpus;
    api_->put(n);
  }
  api_->put(yaml_json(R"(apiVersion: v1
kind: Pod
metadata:
  name: placed
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: main}
spec:
  schedulingGates: [{name: kueue.x-k8s.io/admission}]
  containers:
  - name: main
    image: busybox
    resources: {limits: {nvidia.com/gpu: "4", cpu: "1", memory: 1Gi}}
status: {phase: Pending}
)"));
  start_bridge("bridge.log");
  bridge::StandInScheduler scheduler(api_->store());
  ASSERT_TRUE(eventually(
      [&] {
        scheduler.sync();
        return !scheduler.node_of("team-a", "placed").empty();
      },
      seconds(30)))
      << "bridge:\n"
      << bridge_->log() << "\ngpuaasd:\n"
      << log();
  const auto pod = api_->get("v1", "Pod", "team-a", "placed");
  ASSERT_TRUE(pod);
  // Where the daemon placed it (the plan rides on its admission patch): h100-b once it knows both
  // nodes; the bridge may publish the pod before the second node, so the plan is read back.
  const json plan = json::parse(
      (*pod)["metadata"]["annotations"].value("gpuaas.io/placement", "{}"), nullptr, false);
  ASSERT_TRUE(plan.contains("podSets")) << pod->dump();
  const std::string planned = plan["podSets"][0]["nodes"].begin().key();
  EXPECT_EQ(scheduler.node_of("team-a", "placed"), planned);
  EXPECT_EQ((*pod)["spec"]["nodeSelector"].value("kubernetes.io/hostname", ""), "host-" + planned)
      << pod->dump();
  EXPECT_EQ(bridge_->stop(SIGTERM), 0) << bridge_->log();
}

}  // namespace
}  // namespace gpuaas::testing
